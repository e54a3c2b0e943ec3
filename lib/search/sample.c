/* The sampling searches; sample.h documents them. */
#include "sample.h"

#include <stdlib.h>

#include "kinds.h"
#include "plan.h"
#include "search.h"

struct sample {
	struct ploom_strategy base;     /* first: a sample is a strategy (search.h) */
	struct ploom_sample_opts o;
	int part;               /* w: this part runs the schedules i with i mod parts = w */
	int next_part;          /* the first part: the part split() gives next */
	long index;             /* the schedule under way, or next */
	long longest;           /* the most branch points of a schedule this part ran */
	struct ploom_seed_stream stream; /* past the seed of schedule index */
	struct ploom_policy_spec spec;   /* of schedule index */
};

void ploom_seed_stream_init(struct ploom_seed_stream *s, unsigned long seed)
{
	/* as srand48(seed) sets the state */
	s->x[0] = 0x330E;
	s->x[1] = (unsigned short)(seed & 0xFFFF);
	s->x[2] = (unsigned short)(seed >> 16 & 0xFFFF);
}

uint64_t ploom_seed_stream_next(struct ploom_seed_stream *s)
{
	uint64_t v = 0;
	int i;

	/* nrand48() gives 31 bits: its top 16 are bits 15..30 */
	for (i = 0; i < 3; i++)
		v = v << 16 | (uint64_t)(nrand48(s->x) >> 15 & 0xFFFF);
	return v;
}

/* Moves on to schedule index + skip + 1 of the stream: skip seeds go by. */
static void take_seed(struct sample *p, long skip)
{
	while (skip-- > 0)
		(void)ploom_seed_stream_next(&p->stream);
	p->spec.seed = ploom_seed_stream_next(&p->stream);
	p->spec.k = p->longest;
}

/* The schedules of part w from index on that lie below max_schedules. */
static long share(const struct sample *p, long index)
{
	long max = p->o.max_schedules;

	return index < max ? (max - index + p->o.parts - 1) / p->o.parts : 0;
}

static const int *sample_prefix(const struct ploom_strategy *self, size_t *out_len)
{
	(void)self;
	*out_len = 0;
	return NULL;
}

static const struct ploom_policy_spec *sample_policy(const struct ploom_strategy *self)
{
	return &((const struct sample *)self)->spec;
}

static int sample_next(struct ploom_strategy *self, const struct ploom_run *run,
		       struct ploom_err *err)
{
	struct sample *p = (struct sample *)self;
	long branch = 0;
	size_t i;

	(void)err;
	for (i = 0; i < run->nsteps; i++)
		branch += run->steps[i].nenabled > 1;
	if (branch > p->longest)
		p->longest = branch > PLOOM_PCT_MAX_K ? PLOOM_PCT_MAX_K : branch;
	p->index += p->o.parts;
	if (p->o.max_schedules && p->index >= p->o.max_schedules)
		return 0;
	take_seed(p, p->o.parts - 1);
	return 1;
}

static long sample_split_depth(const struct ploom_strategy *self)
{
	const struct sample *p = (const struct sample *)self;

	if (p->part || p->next_part >= p->o.parts ||
	    (p->o.max_schedules && p->next_part >= p->o.max_schedules))
		return -1;
	return 0;
}

static int new_part(struct sample **out, const struct ploom_sample_opts *o, int part,
		    const struct ploom_strategy_ops *ops, struct ploom_err *err)
{
	struct sample *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return ploom_err_oom(err);
	p->base.ops = ops;
	p->o = *o;
	p->part = part;
	p->next_part = part ? o->parts : 1;
	p->index = part;
	p->spec.kind = o->kind;
	p->spec.depth = o->kind == PLOOM_POLICY_PCT ? o->depth : 0;
	ploom_seed_stream_init(&p->stream, o->seed);
	take_seed(p, part);
	*out = p;
	return 0;
}

static int sample_split(struct ploom_strategy **out, struct ploom_strategy *self,
			struct ploom_err *err)
{
	struct sample *p = (struct sample *)self, *sub = NULL;

	*out = NULL;
	if (sample_split_depth(self) < 0)
		return 0;
	if (new_part(&sub, &p->o, p->next_part, self->ops, err) < 0)
		return -1;
	p->next_part++;
	*out = &sub->base;
	return 1;
}

static double sample_left(const struct ploom_strategy *self)
{
	const struct sample *p = (const struct sample *)self;
	long left = share(p, p->index);
	int w;

	/* the first part holds the parts it has not given yet */
	for (w = p->part ? p->o.parts : p->next_part; w < p->o.parts; w++)
		left += share(p, w);
	return (double)left / (double)p->o.max_schedules;
}

static void sample_free(struct ploom_strategy *self)
{
	free(self);
}

/* Without a schedule limit a sample has no size: no left(). */
#define SAMPLE_OPS(NAME, LEFT) { \
	.name = NAME, \
	.prefix = sample_prefix, \
	.sleep = NULL, \
	.next = sample_next, \
	.split_depth = sample_split_depth, \
	.split = sample_split, \
	.free = sample_free, \
	.left = LEFT, \
	.policy = sample_policy, \
	.samples = 1, \
}

static const struct ploom_strategy_ops pct_ops = SAMPLE_OPS("pct", sample_left);
static const struct ploom_strategy_ops pct_ops_unsized = SAMPLE_OPS("pct", NULL);
static const struct ploom_strategy_ops random_ops = SAMPLE_OPS("random", sample_left);
static const struct ploom_strategy_ops random_ops_unsized = SAMPLE_OPS("random", NULL);

int ploom_sample_strategy_new(struct ploom_strategy **out, const struct ploom_sample_opts *o,
			      struct ploom_err *err)
{
	const struct ploom_strategy_ops *ops;
	struct sample *p = NULL;

	*out = NULL;
	if (o->kind != PLOOM_POLICY_PCT && o->kind != PLOOM_POLICY_RANDOM)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "a sample is pct or random, not '%s'",
				     ploom_policy_name(o->kind));
	if (o->seed > PLOOM_SAMPLE_MAX_SEED)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "seed %lu is above %lu", o->seed,
				     PLOOM_SAMPLE_MAX_SEED);
	if (o->kind == PLOOM_POLICY_PCT && (o->depth < 1 || o->depth > PLOOM_PCT_MAX_DEPTH))
		return ploom_err_set(err, PLOOM_ERR_INPUT, "pct depth %d is not from 1 to %d",
				     o->depth, PLOOM_PCT_MAX_DEPTH);
	if (o->parts < 1 || o->max_schedules < 0)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "a sample needs a part and no negative limit");
	if (o->kind == PLOOM_POLICY_PCT)
		ops = o->max_schedules ? &pct_ops : &pct_ops_unsized;
	else
		ops = o->max_schedules ? &random_ops : &random_ops_unsized;
	if (new_part(&p, o, 0, ops, err) < 0)
		return -1;
	*out = &p->base;
	return 0;
}

/* ---- the kinds ---- */

static int sample_new(struct ploom_strategy **out, const struct ploom_plan *plan,
		      enum ploom_policy_kind policy, struct ploom_err *err)
{
	struct ploom_sample_opts opts = {policy, plan->seed, plan->pct_depth, plan->max_schedules,
					 plan->jobs};

	return ploom_sample_strategy_new(out, &opts, err);
}

int ploom_search_pct_new(struct ploom_strategy **out, struct ploom_plan *plan,
			 struct ploom_err *err)
{
	return sample_new(out, plan, PLOOM_POLICY_PCT, err);
}

int ploom_search_random_new(struct ploom_strategy **out, struct ploom_plan *plan,
			    struct ploom_err *err)
{
	return sample_new(out, plan, PLOOM_POLICY_RANDOM, err);
}

/* why a sample cannot be combined with --reduction=dpor and --shard */
#define SAMPLE_NO_DPOR "a sample draws its choices in the worker, where no partial-order " \
	"reduction runs"
#define SAMPLE_NO_SHARD "shards split a depth-first tree; give each machine a --seed of " \
	"its own instead"

const struct ploom_refusal ploom_search_pct_refusals[] = {
	{PLOOM_PLAN_OPT_REDUCTION, SAMPLE_NO_DPOR},
	{PLOOM_PLAN_OPT_SHARD, SAMPLE_NO_SHARD},
	{PLOOM_PLAN_OPT_MAX_PREEMPTIONS, "a pct schedule has at most --pct-depth minus 1 preemptions"},
	{0, NULL},
};

const struct ploom_refusal ploom_search_random_refusals[] = {
	{PLOOM_PLAN_OPT_REDUCTION, SAMPLE_NO_DPOR},
	{PLOOM_PLAN_OPT_SHARD, SAMPLE_NO_SHARD},
	{PLOOM_PLAN_OPT_MAX_PREEMPTIONS, "its choices are drawn, not bounded"},
	{0, NULL},
};
