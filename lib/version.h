/* version.h - the version every utility prints for --version.  The
 * build may pass -DPLOOM_VERSION="..." to override it. */
#ifndef PLOOM_VERSION_H
#define PLOOM_VERSION_H

#ifndef PLOOM_VERSION
#define PLOOM_VERSION "0.1.0"
#endif

#endif
