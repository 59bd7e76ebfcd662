/* bench_group.h - the group mode of prover-bench-policy (bench_group.c). */
#ifndef PV_TOOLS_BENCH_GROUP_H
#define PV_TOOLS_BENCH_GROUP_H

/* prover-bench-policy group [size=default|20m|500m|both] [groups=2] [G=8] [config=FILE]
 * [section.key=value ...]: argv[0] is "group". Prints the report; returns the process exit code (1
 * also when the two modes did not play the same episodes). */
int pv_bench_group(int argc, char **argv);

#endif
