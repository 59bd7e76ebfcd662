/* config.h - one YAML file per run, every key overridable as `section.key=value`.
 *
 * The keys, types, ranges, defaults and docs are listed once in config_keys.h; this header
 * turns them into a plain struct:
 *
 *     pv_config_t cfg;
 *     pv_config_defaults(&cfg);
 *     pv_config_load_file(&cfg, "cluster/configs/alfworld.yaml", &em);  // YAML, two levels
 *     pv_config_set(&cfg, "algorithm.adv_estimator", "grpo", &em);      // CLI override
 *     if (strcmp(cfg.algorithm.adv_estimator, "grpo") == 0) ...
 *
 * The struct holds no pointers (strings are fixed arrays), so it can be copied, broadcast
 * over MPI as bytes and compared with memcmp after pv_config_defaults() zeroes it.
 * The file format is YAML (parsed by libyaml), a mapping of sections to mappings of keys
 * to scalars, the shape verl/Hydra users know; the overrides use Hydra's dotted syntax.
 * Unknown sections or keys, values of the wrong type and values out of range are errors
 * whose message names the key, the expected type or range, and the file line.
 */
#ifndef PV_CONFIG_H
#define PV_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/config_keys.h"
#include "common/err.h"

#define PV_CONFIG_STR_MAX 256

#define PV_CFG_FIELD_I_(sec, key, def, lo, hi, doc)  int64_t key;
#define PV_CFG_FIELD_F_(sec, key, def, lo, hi, doc)  double key;
#define PV_CFG_FIELD_B_(sec, key, def, doc)          bool key;
#define PV_CFG_FIELD_S_(sec, key, def, doc)          char key[PV_CONFIG_STR_MAX];
#define PV_CFG_FIELD_E_(sec, key, def, choices, doc) char key[64];
#define PV_CFG_SECTION_(sec)                                                                       \
    struct {                                                                                       \
        PV_CONFIG_##sec(PV_CFG_FIELD_I_, PV_CFG_FIELD_F_, PV_CFG_FIELD_B_, PV_CFG_FIELD_S_,        \
                        PV_CFG_FIELD_E_)                                                           \
    } sec;

/* The whole configuration of a run: cfg.<section>.<key>. */
typedef struct pv_config {
    PV_CONFIG_SECTIONS(PV_CFG_SECTION_)
} pv_config_t;

/* Zero the struct, then set every key to its default. */
void pv_config_defaults(pv_config_t *cfg);

/* Apply a YAML file on top of the current values. Errors: PV_ERR_IO (cannot open),
 * PV_ERR_PARSE (not YAML, or not a mapping of mappings of scalars), PV_ERR_CONFIG (unknown
 * key, wrong type, out of range); `em` gets "path:line: detail". On error `cfg` may hold the
 * keys applied before the bad one. */
pv_err_t pv_config_load_file(pv_config_t *cfg, const char *path, pv_errmsg_t *em);

/* Apply YAML text (same rules; `origin` names it in messages, e.g. "checkpoint"). */
pv_err_t pv_config_load_text(pv_config_t *cfg, const char *yaml, size_t len, const char *origin,
                             pv_errmsg_t *em);

/* Set one key from text: `dotted` is "section.key". Booleans accept true/false/yes/no/on/
 * off/1/0; integers accept decimal with an optional k/M/G suffix (x1000^n); floats accept
 * anything strtod does (finite only). Errors: PV_ERR_CONFIG with the key, the expected type
 * and range or choices, and a suggestion when an unknown key is close to a known one. */
pv_err_t pv_config_set(pv_config_t *cfg, const char *dotted, const char *value, pv_errmsg_t *em);

/* Parse a command line: `--config FILE` (or `-c FILE`) loads a file, every
 * `section.key=value` argument is an override applied after all files (so the command line
 * always wins), then pv_config_check() checks the result. Arguments that are neither are left for
 * the caller: their indices are written to rest[0..*n_rest) (rest may be NULL when none are
 * allowed, then they are errors). argv[0] is skipped. */
pv_err_t pv_config_from_args(pv_config_t *cfg, int argc, char **argv, int *rest, int *n_rest,
                             pv_errmsg_t *em);

/* The checks a key's type and range cannot express, so that a value every role would refuse
 * at start-up is refused by prover-config too: env.gen_task_types must not set bit 0,
 * broker.bind and broker.endpoint must be ZeroMQ endpoints (tcp://HOST:PORT with PORT
 * 1..65535 in digits only, or * to bind; ipc://PATH; inproc://NAME), broker.metrics_bind an
 * IPv4 address or empty. pv_config_from_args runs it after the overrides. Errors:
 * PV_ERR_CONFIG naming the key, the value and the rule. */
pv_err_t pv_config_check(const pv_config_t *cfg, pv_errmsg_t *em);

/* The settings of `cfg` that were changed from their defaults but do nothing in this
 * configuration, one sentence per line ("policy.layers=2 has no effect with
 * policy.kind=bow_mlp: a transformer setting"), into buf (cap bytes, always terminated,
 * cut at a line end when it does not fit). The rules: a policy key documented as
 * "bow_mlp: ..." under policy.kind=transformer; one documented as "transformer: ..." or
 * "transformer without path: ..." under bow_mlp; one documented "transformer without path:"
 * when policy.path is set (the model directory's config.json gives the sizes);
 * learner.bc_mask=true without policy.decode=constrain on a transformer; policy.decode
 * other than generate under bow_mlp. Returns the number of lines (0: nothing ignored).
 * The learner and prover-train-local log them as warnings at start-up, prover-config
 * prints them on stderr. */
size_t pv_config_ignored(const pv_config_t *cfg, char *buf, size_t cap);

/* The value of one key as text, as a user would write it (strings unquoted, floats in
 * their shortest exact form): `dotted` is "section.key". Errors: PV_ERR_CONFIG (unknown
 * key, with a suggestion), PV_ERR_LIMIT (cap too small). */
pv_err_t pv_config_get_text(const pv_config_t *cfg, const char *dotted, char *buf, size_t cap,
                            pv_errmsg_t *em);

/* Write the effective configuration as YAML (every key, sections in order), loadable by
 * pv_config_load_text(). Errors: PV_ERR_IO. */
pv_err_t pv_config_write_yaml(const pv_config_t *cfg, FILE *out);

/* Same into a buffer; *len receives the length (without NUL). Errors: PV_ERR_LIMIT when
 * cap is too small (use pv_config_yaml_max()), PV_ERR_IO. */
pv_err_t pv_config_to_yaml(const pv_config_t *cfg, char *buf, size_t cap, size_t *len);

/* Upper bound of the YAML text length of any configuration. */
size_t pv_config_yaml_max(void);

/* Markdown reference of every key (type, default, range/choices, doc): docs/config.md. */
void pv_config_describe(FILE *out);

/* The run's name: run.name, or when it is empty the last component of run.out_dir (trailing
 * slashes ignored; "." when that is empty too), into buf (truncated to cap - 1 bytes). */
const char *pv_config_run_name(const pv_config_t *cfg, char *buf, size_t cap);

/* Number of keys, and the dotted name of key i (for tools and tests). */
size_t pv_config_n_keys(void);
const char *pv_config_key_name(size_t i, char *buf, size_t cap);

#endif
