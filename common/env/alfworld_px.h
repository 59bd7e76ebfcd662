/* alfworld_px.h - the PDDL reader's shared pieces, used by alfworld_pddl.c (domains, formulas)
 * and alfworld_problem.c (problems). Private to those files. */
#ifndef PV_ALFWORLD_PX_H
#define PV_ALFWORLD_PX_H

#include "common/env/alfworld_int.h"

typedef struct pv_alf_px {
    pv_arena_t *arena;
    const char *what;
    pv_errmsg_t *em;
    pv_alf_domain_t *dom;     /* while parsing a domain (predicates being declared) */
    const pv_alf_domain_t *d; /* domain to resolve predicates */
    pv_alf_scope_t *scope;
    uint16_t vis[PV_ALF_MAX_VARS]; /* visible variables, innermost last */
    uint16_t n_vis;
} pv_alf_px_t;

/* A typed list "a b - t c" as names and types (Fast Downward's parse_typed_list). */
typedef struct pv_alf_typed {
    uint32_t n;
    const char **name;
    const char **type;
    uint32_t *line;
} pv_alf_typed_t;

/* Items x->kids[from..] as a typed list; untyped names get "object". */
pv_err_t pv_alf_px_typed_list(pv_alf_px_t *px, const pv_alf_sx_t *x, uint32_t from,
                              pv_alf_typed_t *out);

/* A condition (effect = false) or an effect formula, variables resolved in px->scope. */
pv_err_t pv_alf_px_formula(pv_alf_px_t *px, const pv_alf_sx_t *x, bool effect, int depth,
                           pv_alf_fm_t **out);

/* The single (define (KIND NAME) ...) of a text: its node and NAME. */
pv_err_t pv_alf_px_define(pv_alf_px_t *px, const pv_alf_sx_t *top, const char *kind,
                          const pv_alf_sx_t **def, const char **name);

/* Domain type ids of a scope's variables (pv_alf_domain_type). */
void pv_alf_px_scope_types(const pv_alf_domain_t *d, pv_alf_scope_t *sc);

#endif
