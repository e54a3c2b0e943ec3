/* simworker.h - a stand-in worker process that runs the simulator.
 *
 * A C test that starts workers of itself (struct ploom_worker_opts'
 * python = the test's own /proc/self/exe) calls simworker_main() first in
 * main(): when the test was started as `SELF -P -m ploom._worker
 * [--instrument=MOD]... [--instrument-scenario] TARGET`, it answers the
 * worker protocol (event.h) from the simulator (sim.h) and never returns,
 * so that the search driver's processes, pipes and polls are the real
 * ones.
 *
 * TARGET is NAME, or NAME|OPTION|OPTION... with NAME:
 *   a simulated scenario (sim_find())
 *   gen:SEED   the program sim_prog_generate() makes of SEED, 12 operations
 *   diverge    every schedule's outcome is a divergence
 *   numbered   every schedule fails, with the message "run C" where C is
 *              its first choice: as many distinct outcomes as schedules
 * and each OPTION one of:
 *   rename=N   a failure with fewer than N preemptions has the message
 *              "another bug": another failure than the others
 *   ignore     runs the default schedule whatever the choices
 *   die=N      exits after N runs, as a worker that dies
 *   log=PATH   appends a line to the file PATH for each run
 * A schedule with more steps than the run command's MAX_STEPS is cut
 * there with the outcome step-limit, as the real worker does.
 */
#ifndef PLOOM_TEST_SIMWORKER_H
#define PLOOM_TEST_SIMWORKER_H

/* Becomes the stand-in worker when argc > 1 and never returns: any
 * command line but the worker's exits 2 at once, naming what it takes, so
 * that the test never runs again in a worker that would start its own. */
void simworker_main(int argc, char **argv);

/* This program's path (/proc/self/exe): the interpreter that
 * ploom_worker_start() runs to start the stand-in.  Aborts when it cannot
 * be read. */
const char *simworker_self(void);

#endif
