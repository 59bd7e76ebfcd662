/* config.c - the key table, YAML loading (libyaml), overrides and dumps; see config.h. */
#include "common/config.h"
#include "common/fs.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

typedef enum { S_INT, S_FLOAT, S_BOOL, S_STR, S_ENUM } s_type_t;

typedef struct s_key {
    const char *section;
    const char *key;
    s_type_t type;
    size_t offset;
    size_t size; /* storage bytes (strings: the array size) */
    int64_t idef, ilo, ihi;
    double fdef, flo, fhi;
    bool bdef;
    const char *sdef;
    const char *choices;
    const char *doc;
} s_key_t;

#define S_OFF_(sec, key)  offsetof(pv_config_t, sec.key)
#define S_SIZE_(sec, key) sizeof(((pv_config_t *)0)->sec.key)
#define S_KEY_I_(sec, k, def, lo, hi, d)                                                           \
    {.section = #sec,                                                                              \
     .key = #k,                                                                                    \
     .type = S_INT,                                                                                \
     .offset = S_OFF_(sec, k),                                                                     \
     .size = S_SIZE_(sec, k),                                                                      \
     .idef = (def),                                                                                \
     .ilo = (lo),                                                                                  \
     .ihi = (hi),                                                                                  \
     .doc = (d)},
#define S_KEY_F_(sec, k, def, lo, hi, d)                                                           \
    {.section = #sec,                                                                              \
     .key = #k,                                                                                    \
     .type = S_FLOAT,                                                                              \
     .offset = S_OFF_(sec, k),                                                                     \
     .size = S_SIZE_(sec, k),                                                                      \
     .fdef = (def),                                                                                \
     .flo = (lo),                                                                                  \
     .fhi = (hi),                                                                                  \
     .doc = (d)},
#define S_KEY_B_(sec, k, def, d)                                                                   \
    {.section = #sec,                                                                              \
     .key = #k,                                                                                    \
     .type = S_BOOL,                                                                               \
     .offset = S_OFF_(sec, k),                                                                     \
     .size = S_SIZE_(sec, k),                                                                      \
     .bdef = (def),                                                                                \
     .doc = (d)},
#define S_KEY_S_(sec, k, def, d)                                                                   \
    {.section = #sec,                                                                              \
     .key = #k,                                                                                    \
     .type = S_STR,                                                                                \
     .offset = S_OFF_(sec, k),                                                                     \
     .size = S_SIZE_(sec, k),                                                                      \
     .sdef = (def),                                                                                \
     .doc = (d)},
#define S_KEY_E_(sec, k, def, ch, d)                                                               \
    {.section = #sec,                                                                              \
     .key = #k,                                                                                    \
     .type = S_ENUM,                                                                               \
     .offset = S_OFF_(sec, k),                                                                     \
     .size = S_SIZE_(sec, k),                                                                      \
     .sdef = (def),                                                                                \
     .choices = (ch),                                                                              \
     .doc = (d)},
#define S_SECTION_KEYS_(sec) PV_CONFIG_##sec(S_KEY_I_, S_KEY_F_, S_KEY_B_, S_KEY_S_, S_KEY_E_)

static const s_key_t s_keys[] = {PV_CONFIG_SECTIONS(S_SECTION_KEYS_)};
#define S_N_KEYS (sizeof s_keys / sizeof s_keys[0])

static const char *const s_type_names[] = {"integer", "float", "boolean", "string", "choice"};

/* Sub-sections (config_keys.h): section id parent_child is written parent.child. */
typedef struct s_sub {
    const char *id, *name, *child;
} s_sub_t;
#define S_SUB_(a, b) {#a "_" #b, #a "." #b, #b},
static const s_sub_t s_subs[] = {PV_CONFIG_SUBSECTIONS(S_SUB_)};
#define S_N_SUBS (sizeof s_subs / sizeof s_subs[0])

/* The sub-section entry of section id `id`, or NULL for a top-level section. */
static const s_sub_t *s_sub(const char *id)
{
    for (size_t i = 0; i < S_N_SUBS; i++)
        if (strcmp(s_subs[i].id, id) == 0)
            return &s_subs[i];
    return NULL;
}

/* The written name of section id `id`: "cluster.slurm" for cluster_slurm, else `id`. */
static const char *s_secname(const char *id)
{
    const s_sub_t *sub = s_sub(id);
    return sub ? sub->name : id;
}

size_t pv_config_n_keys(void)
{
    return S_N_KEYS;
}

const char *pv_config_key_name(size_t i, char *buf, size_t cap)
{
    if (i >= S_N_KEYS)
        return NULL;
    snprintf(buf, cap, "%s.%s", s_secname(s_keys[i].section), s_keys[i].key);
    return buf;
}

void pv_config_defaults(pv_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < S_N_KEYS; i++) {
        const s_key_t *k = &s_keys[i];
        char *p = (char *)cfg + k->offset;
        switch (k->type) {
        case S_INT:
            memcpy(p, &k->idef, sizeof k->idef);
            break;
        case S_FLOAT:
            memcpy(p, &k->fdef, sizeof k->fdef);
            break;
        case S_BOOL:
            memcpy(p, &k->bdef, sizeof k->bdef);
            break;
        case S_STR:
        case S_ENUM:
            snprintf(p, k->size, "%s", k->sdef);
            break;
        }
    }
}

/* Levenshtein distance, capped inputs (keys are short). */
static size_t s_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static pv_err_t s_unknown_key(const char *where, const char *dotted, pv_errmsg_t *em)
{
    size_t best = 99, best_i = 0;
    char name[160];
    for (size_t i = 0; i < S_N_KEYS; i++) {
        size_t d = s_edit_distance(dotted, pv_config_key_name(i, name, sizeof name));
        if (d < best) {
            best = d;
            best_i = i;
        }
    }
    if (best <= 3)
        return pv_errf(em, PV_ERR_CONFIG, "%sunknown key '%s' (did you mean '%s.%s'?)", where,
                       dotted, s_secname(s_keys[best_i].section), s_keys[best_i].key);
    return pv_errf(em, PV_ERR_CONFIG, "%sunknown key '%s' (`prover-config --describe` lists them)",
                   where, dotted);
}

static const s_key_t *s_find(const char *section, const char *key)
{
    for (size_t i = 0; i < S_N_KEYS; i++)
        if (strcmp(s_secname(s_keys[i].section), section) == 0 && strcmp(s_keys[i].key, key) == 0)
            return &s_keys[i];
    return NULL;
}

static bool s_section_exists(const char *section)
{
    for (size_t i = 0; i < S_N_KEYS; i++)
        if (strcmp(s_secname(s_keys[i].section), section) == 0)
            return true;
    return false;
}

static bool s_choice_ok(const char *choices, const char *value)
{
    size_t n = strlen(value);
    for (const char *c = choices; *c;) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && strncmp(c, value, n) == 0)
            return true;
        if (!bar)
            break;
        c = bar + 1;
    }
    return false;
}

static bool s_parse_int(const char *text, int64_t *out)
{
    errno = 0;
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    if (end == text || errno == ERANGE)
        return false;
    long long mult = 1;
    if (*end == 'k' || *end == 'K')
        mult = 1000LL, end++;
    else if (*end == 'M')
        mult = 1000000LL, end++;
    else if (*end == 'G')
        mult = 1000000000LL, end++;
    if (*end != '\0')
        return false;
    if (mult > 1 && (v > INT64_MAX / mult || v < INT64_MIN / mult))
        return false;
    *out = (int64_t)(v * mult);
    return true;
}

static bool s_parse_bool(const char *text, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(text, yes[i]) == 0)
            return *out = true, true;
        if (strcasecmp(text, no[i]) == 0)
            return *out = false, true;
    }
    return false;
}

/* Set key `k` from `value`; `where` prefixes messages ("file.yaml:12: " or ""). */
static pv_err_t s_set(pv_config_t *cfg, const s_key_t *k, const char *value, const char *where,
                      pv_errmsg_t *em)
{
    char *p = (char *)cfg + k->offset;
    switch (k->type) {
    case S_INT: {
        int64_t v;
        if (!s_parse_int(value, &v))
            return pv_errf(em, PV_ERR_CONFIG, "%s%s.%s: expected an integer, got '%s'", where,
                           s_secname(k->section), k->key, value);
        if (v < k->ilo || v > k->ihi)
            return pv_errf(
                em, PV_ERR_CONFIG, "%s%s.%s: %lld is out of range (integer in [%lld, %lld])", where,
                s_secname(k->section), k->key, (long long)v, (long long)k->ilo, (long long)k->ihi);
        memcpy(p, &v, sizeof v);
        return PV_OK;
    }
    case S_FLOAT: {
        errno = 0;
        char *end = NULL;
        double v = strtod(value, &end);
        if (end == value || *end != '\0' || errno == ERANGE || !isfinite(v))
            return pv_errf(em, PV_ERR_CONFIG, "%s%s.%s: expected a number (float), got '%s'", where,
                           s_secname(k->section), k->key, value);
        if (v < k->flo || v > k->fhi)
            return pv_errf(em, PV_ERR_CONFIG, "%s%s.%s: %g is out of range (float in [%g, %g])",
                           where, s_secname(k->section), k->key, v, k->flo, k->fhi);
        memcpy(p, &v, sizeof v);
        return PV_OK;
    }
    case S_BOOL: {
        bool v;
        if (!s_parse_bool(value, &v))
            return pv_errf(em, PV_ERR_CONFIG, "%s%s.%s: expected a boolean (true/false), got '%s'",
                           where, s_secname(k->section), k->key, value);
        memcpy(p, &v, sizeof v);
        return PV_OK;
    }
    case S_ENUM:
        if (!s_choice_ok(k->choices, value))
            return pv_errf(em, PV_ERR_CONFIG, "%s%s.%s: expected one of %s, got '%s'", where,
                           s_secname(k->section), k->key, k->choices, value);
        snprintf(p, k->size, "%s", value);
        return PV_OK;
    case S_STR:
        if (strlen(value) >= k->size)
            return pv_errf(em, PV_ERR_CONFIG, "%s%s.%s: string longer than %zu bytes", where,
                           s_secname(k->section), k->key, k->size - 1);
        snprintf(p, k->size, "%s", value);
        return PV_OK;
    }
    return PV_ERR_INTERNAL;
}

/* True when `word` occurs in `text` as a whole word: not inside a longer identifier (a '.'
 * before it is allowed: "verl-agent algorithm.gigpo.mode" holds "gigpo.mode"). */
static bool s_has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = text; n && (p = strstr(p, word)) != NULL; p++) {
        bool left = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        char r = p[n];
        if (left && !(isalnum((unsigned char)r) || r == '_' ||
                      (r == '.' && isalnum((unsigned char)p[n + 1]))))
            return true;
    }
    return false;
}

/* A name with more dots than section.key, as verl / Hydra spell theirs
 * ("actor_rollout_ref.rollout.temperature"): point at our key of that meaning, found by a
 * key named like its last part, else a key whose description cites the dotted tail. */
static pv_err_t s_nested_key(const char *dotted, pv_errmsg_t *em)
{
    const char *last = strrchr(dotted, '.') + 1, *tail = last - 1;
    while (tail > dotted && tail[-1] != '.')
        tail--; /* the last two parts: "rollout.temperature" */
    size_t hit = S_N_KEYS;
    for (size_t i = 0; i < S_N_KEYS && hit == S_N_KEYS; i++)
        if (strcmp(s_keys[i].key, last) == 0)
            hit = i;
    for (size_t i = 0; i < S_N_KEYS && hit == S_N_KEYS; i++)
        if (s_has_word(s_keys[i].doc, tail))
            hit = i;
    if (hit < S_N_KEYS)
        return pv_errf(em, PV_ERR_CONFIG,
                       "'%s': prover's keys are section.key=value (verl's nested names are not "
                       "read); did you mean '%s.%s'?",
                       dotted, s_secname(s_keys[hit].section), s_keys[hit].key);
    return pv_errf(em, PV_ERR_CONFIG,
                   "'%s': expected section.key=value (`prover-config --describe` lists the keys)",
                   dotted);
}

/* verl's `trainer:` section (verl/trainer/config/ppo_trainer.yaml): its keys and ours. */
static const char *const s_verl_trainer[][2] = {
    {"total_training_steps", "run.iterations"},
    {"total_epochs", "run.iterations"},
    {"experiment_name", "run.name"},
    {"project_name", "run.name"},
    {"default_local_dir", "run.out_dir"},
    {"save_freq", "learner.checkpoint_every"},
    {"test_freq", "learner.eval_every"},
    {"resume_from_path", "learner.resume"},
    {"nnodes", "cluster.slurm.nodes"},
};

/* An unknown section: verl's `trainer` gets a pointer at run.* (and at the key of that
 * meaning when `key` is one of verl's), any other the list of sections. */
static pv_err_t s_unknown_section(const char *where, const char *section, const char *key,
                                  pv_errmsg_t *em)
{
    if (strcmp(section, "trainer") == 0) {
        for (size_t i = 0; key && i < sizeof s_verl_trainer / sizeof s_verl_trainer[0]; i++)
            if (strcmp(key, s_verl_trainer[i][0]) == 0)
                return pv_errf(em, PV_ERR_CONFIG,
                               "%sunknown section 'trainer' (verl's trainer.%s is %s here)", where,
                               key, s_verl_trainer[i][1]);
        return pv_errf(em, PV_ERR_CONFIG,
                       "%sunknown section 'trainer': verl's trainer settings are run.* here "
                       "(run.iterations, run.name, run.out_dir, run.seed; checkpoints and "
                       "evaluations: learner.checkpoint_every, learner.eval_every, "
                       "learner.resume; nodes: cluster.*)",
                       where);
    }
    char list[512] = "";
    size_t n = 0;
    for (size_t i = 0; i < S_N_KEYS; i++)
        if (i == 0 || strcmp(s_keys[i].section, s_keys[i - 1].section) != 0)
            n += (size_t)snprintf(list + n, n < sizeof list ? sizeof list - n : 0, "%s%s",
                                  i ? ", " : "", s_secname(s_keys[i].section));
    return pv_errf(em, PV_ERR_CONFIG, "%sunknown section '%s' (sections: %s)", where, section,
                   list);
}

pv_err_t pv_config_set(pv_config_t *cfg, const char *dotted, const char *value, pv_errmsg_t *em)
{
    /* section.key, the section possibly a sub-section: the key is after the last dot */
    const char *first = dotted ? strchr(dotted, '.') : NULL;
    const char *last = dotted ? strrchr(dotted, '.') : NULL;
    if (!first || first == dotted || !last[1])
        return pv_errf(em, PV_ERR_CONFIG, "'%s': expected section.key=value", dotted ? dotted : "");
    char section[64];
    size_t slen = (size_t)(last - dotted);
    if (slen >= sizeof section)
        return s_unknown_key("", dotted, em);
    memcpy(section, dotted, slen);
    section[slen] = '\0';
    if (!s_section_exists(section)) {
        if (first != last) /* verl / Hydra's nested names */
            return s_nested_key(dotted, em);
        if (strcmp(section, "trainer") == 0)
            return s_unknown_section("", section, last + 1, em);
        return s_unknown_key("", dotted, em);
    }
    const s_key_t *k = s_find(section, last + 1);
    if (!k)
        return s_unknown_key("", dotted, em);
    return s_set(cfg, k, value ? value : "", "", em);
}

static const char *s_scalar(yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

/* The keys of section `section` (its written name) from mapping node `map`; a key whose
 * value is a mapping and that names a sub-section (cluster: {slurm: {...}}) is loaded as that
 * section. key_line[] is the line where each key was first given (0 = not yet). */
static pv_err_t s_load_section(pv_config_t *cfg, yaml_document_t *doc, yaml_node_t *map,
                               const char *section, const char *origin, size_t *key_line,
                               pv_errmsg_t *em)
{
    char where[PV_CONFIG_STR_MAX + 32];
    for (yaml_node_pair_t *kp = map->data.mapping.pairs.start; kp < map->data.mapping.pairs.top;
         kp++) {
        yaml_node_t *kk = yaml_document_get_node(doc, kp->key);
        yaml_node_t *kv = yaml_document_get_node(doc, kp->value);
        size_t line = (size_t)kk->start_mark.line + 1;
        snprintf(where, sizeof where, "%s:%zu: ", origin, line);
        if (kk->type != YAML_SCALAR_NODE)
            return pv_errf(em, PV_ERR_PARSE, "%skeys must be plain words", where);
        char dotted[160];
        snprintf(dotted, sizeof dotted, "%s.%s", section, s_scalar(kk));
        if (kv->type == YAML_MAPPING_NODE && s_section_exists(dotted)) {
            pv_err_t rc = s_load_section(cfg, doc, kv, dotted, origin, key_line, em);
            if (rc != PV_OK)
                return rc;
            continue;
        }
        const s_key_t *k = s_find(section, s_scalar(kk));
        if (!k)
            return s_unknown_key(where, dotted, em);
        size_t ki = (size_t)(k - s_keys);
        if (key_line[ki])
            return pv_errf(em, PV_ERR_CONFIG, "%s%s given twice (first at line %zu)", where, dotted,
                           key_line[ki]);
        key_line[ki] = line;
        if (kv->type != YAML_SCALAR_NODE)
            return pv_errf(em, PV_ERR_CONFIG, "%s%s: expected a single %s value, got a %s", where,
                           dotted, s_type_names[k->type],
                           kv->type == YAML_MAPPING_NODE ? "mapping" : "list");
        pv_err_t rc = s_set(cfg, k, s_scalar(kv), where, em);
        if (rc != PV_OK)
            return rc;
    }
    return PV_OK;
}

pv_err_t pv_config_load_text(pv_config_t *cfg, const char *yaml, size_t len, const char *origin,
                             pv_errmsg_t *em)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    pv_err_t rc = PV_OK;
    char where[PV_CONFIG_STR_MAX + 32];
    if (!yaml_parser_initialize(&parser))
        return PV_ERR_NOMEM;
    yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = pv_errf(em, PV_ERR_PARSE, "%s:%zu: YAML error: %s", origin,
                     (size_t)parser.problem_mark.line + 1,
                     parser.problem ? parser.problem : "unknown");
        yaml_parser_delete(&parser);
        return rc;
    }
    /* YAML forbids repeated keys; libyaml accepts them, so they are refused here (the line
     * where each key and section was first given, 0 = not yet) */
    size_t key_line[S_N_KEYS] = {0};
    char sections_seen[64][32];
    size_t section_line[64] = {0}, n_sections = 0;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) /* empty document: nothing to apply */
        goto out;
    if (root->type != YAML_MAPPING_NODE) {
        rc = pv_errf(em, PV_ERR_PARSE,
                     "%s:%zu: expected a mapping of sections (section: {key: value})", origin,
                     (size_t)root->start_mark.line + 1);
        goto out;
    }
    for (yaml_node_pair_t *sp = root->data.mapping.pairs.start; sp < root->data.mapping.pairs.top;
         sp++) {
        yaml_node_t *sk = yaml_document_get_node(&doc, sp->key);
        yaml_node_t *sv = yaml_document_get_node(&doc, sp->value);
        size_t line = (size_t)sk->start_mark.line + 1;
        if (sk->type != YAML_SCALAR_NODE) {
            rc = pv_errf(em, PV_ERR_PARSE, "%s:%zu: a section name must be a plain word", origin,
                         line);
            goto out;
        }
        const char *section = s_scalar(sk);
        if (!s_section_exists(section)) {
            snprintf(where, sizeof where, "%s:%zu: ", origin, line);
            rc = s_unknown_section(where, section, NULL, em);
            goto out;
        }
        for (size_t i = 0; i < n_sections; i++) {
            if (strcmp(sections_seen[i], section) == 0) {
                rc = pv_errf(em, PV_ERR_CONFIG,
                             "%s:%zu: section '%s' given twice (first at line %zu)", origin, line,
                             section, section_line[i]);
                goto out;
            }
        }
        if (n_sections < 64) {
            snprintf(sections_seen[n_sections], sizeof sections_seen[0], "%s", section);
            section_line[n_sections++] = line;
        }
        if (sv->type == YAML_SCALAR_NODE && sv->data.scalar.length == 0)
            continue; /* "section:" with nothing under it */
        if (sv->type != YAML_MAPPING_NODE) {
            rc = pv_errf(em, PV_ERR_PARSE, "%s:%zu: section '%s' must be a mapping of key: value",
                         origin, line, section);
            goto out;
        }
        rc = s_load_section(cfg, &doc, sv, section, origin, key_line, em);
        if (rc != PV_OK)
            goto out;
    }
out:
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return rc;
}

pv_err_t pv_config_load_file(pv_config_t *cfg, const char *path, pv_errmsg_t *em)
{
    FILE *f = NULL;
    pv_err_t orc = pv_open_read(path, &f, em);
    if (orc != PV_OK)
        return orc;
    char *text = NULL;
    size_t len = 0, cap = 0;
    pv_err_t rc = PV_OK;
    for (;;) {
        if (len + 4096 > cap) {
            if (cap >= (64u << 20)) {
                rc = pv_errf(em, PV_ERR_LIMIT, "%s: config file larger than 64 MiB", path);
                goto out;
            }
            cap = cap ? cap * 2 : 8192;
            char *t = realloc(text, cap);
            if (!t) {
                rc = PV_ERR_NOMEM;
                goto out;
            }
            text = t;
        }
        size_t n = fread(text + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    if (ferror(f)) {
        rc = pv_errf(em, PV_ERR_IO, "%s: read error", path);
        goto out;
    }
    rc = pv_config_load_text(cfg, text ? text : "", len, path, em);
out:
    free(text);
    fclose(f);
    return rc;
}

pv_err_t pv_config_from_args(pv_config_t *cfg, int argc, char **argv, int *rest, int *n_rest,
                             pv_errmsg_t *em)
{
    int nr = 0;
    pv_err_t rc;
    /* files first, in order */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0 || strcmp(argv[i], "-c") == 0) {
            if (i + 1 >= argc)
                return pv_errf(em, PV_ERR_CONFIG, "%s needs a file name", argv[i]);
            if ((rc = pv_config_load_file(cfg, argv[++i], em)) != PV_OK)
                return rc;
        } else if (strncmp(argv[i], "--config=", 9) == 0) {
            if ((rc = pv_config_load_file(cfg, argv[i] + 9, em)) != PV_OK)
                return rc;
        }
    }
    /* then overrides, so the command line wins */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0 || strcmp(argv[i], "-c") == 0) {
            i++;
            continue;
        }
        if (strncmp(argv[i], "--config=", 9) == 0)
            continue;
        const char *eq = strchr(argv[i], '=');
        const char *dot = strchr(argv[i], '.');
        if (argv[i][0] != '-' && eq && dot && dot < eq) {
            char key[160];
            size_t klen = (size_t)(eq - argv[i]);
            if (klen >= sizeof key)
                return pv_errf(em, PV_ERR_CONFIG, "'%s': key too long", argv[i]);
            memcpy(key, argv[i], klen);
            key[klen] = '\0';
            if ((rc = pv_config_set(cfg, key, eq + 1, em)) != PV_OK)
                return rc;
            continue;
        }
        if (!rest)
            return pv_errf(em, PV_ERR_CONFIG,
                           "unexpected argument '%s' (expected --config FILE or section.key=value)",
                           argv[i]);
        rest[nr++] = i;
    }
    if (n_rest)
        *n_rest = nr;
    return pv_config_check(cfg, em);
}

/* YAML double-quoted scalar. */
static void s_put_quoted(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

/* The value of key `k` as text: integers, shortest exact floats, true/false, raw strings. */
static void s_format(const pv_config_t *cfg, const s_key_t *k, char *buf, size_t cap)
{
    const char *p = (const char *)cfg + k->offset;
    switch (k->type) {
    case S_INT: {
        int64_t v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, cap, "%lld", (long long)v);
        break;
    }
    case S_FLOAT: {
        double v;
        memcpy(&v, p, sizeof v);
        /* the shortest of %.15g / %.16g / %.17g that reads back exactly */
        for (int digits = 15; digits <= 17; digits++) {
            snprintf(buf, cap, "%.*g", digits, v);
            if (strtod(buf, NULL) == v)
                break;
        }
        break;
    }
    case S_BOOL: {
        bool v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, cap, "%s", v ? "true" : "false");
        break;
    }
    case S_STR:
    case S_ENUM:
        snprintf(buf, cap, "%s", p);
        break;
    }
}

pv_err_t pv_config_write_yaml(const pv_config_t *cfg, FILE *out)
{
    const char *section = "", *indent = "  ";
    char text[PV_CONFIG_STR_MAX + 8];
    for (size_t i = 0; i < S_N_KEYS; i++) {
        const s_key_t *k = &s_keys[i];
        if (strcmp(section, k->section) != 0) {
            section = k->section;
            const s_sub_t *sub = s_sub(section); /* nested under its parent, just written */
            fprintf(out, sub ? "  %s:\n" : "%s:\n", sub ? sub->child : section);
            indent = sub ? "    " : "  ";
        }
        fprintf(out, "%s%s: ", indent, k->key);
        s_format(cfg, k, text, sizeof text);
        if (k->type == S_STR || k->type == S_ENUM)
            s_put_quoted(out, text);
        else
            fputs(text, out);
        fputc('\n', out);
    }
    return ferror(out) ? PV_ERR_IO : PV_OK;
}

pv_err_t pv_config_get_text(const pv_config_t *cfg, const char *dotted, char *buf, size_t cap,
                            pv_errmsg_t *em)
{
    char name[160];
    for (size_t i = 0; i < S_N_KEYS; i++) {
        if (strcmp(pv_config_key_name(i, name, sizeof name), dotted) == 0) {
            char text[PV_CONFIG_STR_MAX + 8];
            s_format(cfg, &s_keys[i], text, sizeof text);
            if (strlen(text) >= cap)
                return PV_ERR_LIMIT;
            snprintf(buf, cap, "%s", text);
            return PV_OK;
        }
    }
    return s_unknown_key("", dotted ? dotted : "", em);
}

/* One "KEY=VALUE has no effect WHY" line onto buf at *len (nothing when it does not fit). */
static void s_ignored_line(const pv_config_t *cfg, const s_key_t *k, const char *why, char *buf,
                           size_t cap, size_t *len, size_t *n)
{
    char value[PV_CONFIG_STR_MAX + 8];
    s_format(cfg, k, value, sizeof value);
    int w = snprintf(buf + *len, cap - *len, "%s.%s=%s has no effect %s\n", k->section, k->key,
                     value, why);
    if (w > 0 && (size_t)w < cap - *len) {
        *len += (size_t)w;
        (*n)++;
    } else {
        buf[*len] = '\0';
    }
}

size_t pv_config_ignored(const pv_config_t *cfg, char *buf, size_t cap)
{
    if (!cap)
        return 0;
    buf[0] = '\0';
    pv_config_t def;
    pv_config_defaults(&def);
    bool tf = strcmp(cfg->policy.kind, "transformer") == 0, path = cfg->policy.path[0] != '\0';
    size_t len = 0, n = 0;
    for (size_t i = 0; i < S_N_KEYS; i++) {
        const s_key_t *k = &s_keys[i];
        char a[PV_CONFIG_STR_MAX + 8], b[PV_CONFIG_STR_MAX + 8];
        s_format(cfg, k, a, sizeof a);
        s_format(&def, k, b, sizeof b);
        if (strcmp(a, b) == 0)
            continue;
        const char *why = NULL;
        bool tf_key = strncmp(k->doc, "transformer:", 12) == 0,
             tf_sizes = strncmp(k->doc, "transformer without path:", 25) == 0;
        if (strcmp(k->section, "policy") == 0 && strcmp(k->key, "decode") == 0 && !tf)
            why = "with policy.kind=bow_mlp: the scorer always ranks the admissible actions";
        else if (strcmp(k->section, "policy") == 0 && strncmp(k->doc, "bow_mlp:", 8) == 0 && tf)
            why = "with policy.kind=transformer: a bow_mlp setting";
        else if ((tf_key || tf_sizes) && !tf)
            why = "with policy.kind=bow_mlp: a transformer setting";
        else if (tf_sizes && path)
            why = "with policy.path set: the model directory's config.json gives the sizes";
        else if (strcmp(k->section, "learner") == 0 && strcmp(k->key, "bc_mask") == 0 &&
                 (!tf || strcmp(cfg->policy.decode, "constrain") != 0))
            why = "without policy.decode=constrain on a transformer: there is no mask";
        else if (strcmp(k->section, "policy") == 0 &&
                 strcmp(k->key, "prompt_task_each_turn") == 0 &&
                 strcmp(cfg->env.name, "searchqa") == 0)
            why = "with env.name=searchqa: Search-R1's prompt holds the question once";
        else if (strcmp(k->section, "env") == 0 && strcmp(k->key, "expert") == 0 &&
                 strcmp(cfg->env.name, "alfworld") != 0)
            why = "outside alfworld: webshop and searchqa have one expert each";
        if (why)
            s_ignored_line(cfg, k, why, buf, cap, &len, &n);
    }
    return n;
}

size_t pv_config_yaml_max(void)
{
    size_t n = 0;
    for (size_t i = 0; i < S_N_KEYS; i++)
        n += strlen(s_keys[i].section) + 4 + strlen(s_keys[i].key) + 8 + 4 * s_keys[i].size + 32;
    return n;
}

pv_err_t pv_config_to_yaml(const pv_config_t *cfg, char *buf, size_t cap, size_t *len)
{
    FILE *f = fmemopen(buf, cap, "w");
    if (!f)
        return PV_ERR_IO;
    pv_err_t rc = pv_config_write_yaml(cfg, f);
    long pos = ftell(f);
    fclose(f);
    if (rc != PV_OK)
        return rc;
    if (pos < 0 || (size_t)pos + 1 >= cap)
        return PV_ERR_LIMIT;
    *len = (size_t)pos;
    return PV_OK;
}

void pv_config_describe(FILE *out)
{
    fprintf(out,
            "# Configuration reference\n\n"
            "Generated by `prover-config --describe` from common/config_keys.h; do not edit.\n\n"
            "A run reads one YAML file (`--config FILE`) of `section:` mappings; any key can be\n"
            "overridden on the command line as `section.key=value` (the command line wins).\n"
            "Unknown keys and bad values are errors.\n");
    const char *section = "";
    for (size_t i = 0; i < S_N_KEYS; i++) {
        const s_key_t *k = &s_keys[i];
        if (strcmp(section, k->section) != 0) {
            section = k->section;
            fprintf(out,
                    "\n## %s\n\n| key | type | default | allowed | meaning |\n"
                    "|---|---|---|---|---|\n",
                    s_secname(section));
        }
        fprintf(out, "| `%s.%s` | %s | ", s_secname(k->section), k->key, s_type_names[k->type]);
        switch (k->type) {
        case S_INT:
            fprintf(out, "%lld | [%lld, %lld] |", (long long)k->idef, (long long)k->ilo,
                    (long long)k->ihi);
            break;
        case S_FLOAT:
            fprintf(out, "%g | [%g, %g] |", k->fdef, k->flo, k->fhi);
            break;
        case S_BOOL:
            fprintf(out, "%s | true, false |", k->bdef ? "true" : "false");
            break;
        case S_STR:
            fprintf(out, "`%s` | text |", k->sdef);
            break;
        case S_ENUM:
            fprintf(out, "`%s` | `%s` |", k->sdef, k->choices);
            break;
        }
        fprintf(out, " %s |\n", k->doc);
    }
}

const char *pv_config_run_name(const pv_config_t *cfg, char *buf, size_t cap)
{
    if (!cap)
        return buf;
    if (cfg->run.name[0]) {
        snprintf(buf, cap, "%s", cfg->run.name);
        return buf;
    }
    const char *d = cfg->run.out_dir;
    size_t end = strlen(d);
    while (end > 1 && d[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && d[start - 1] != '/')
        start--;
    if (start == end)
        snprintf(buf, cap, ".");
    else
        snprintf(buf, cap, "%.*s", (int)(end - start), d + start);
    return buf;
}
