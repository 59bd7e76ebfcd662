/* alfworld_load.h - reading ALFWorld game files and data directories (internal). */
#ifndef PV_ALFWORLD_LOAD_H
#define PV_ALFWORLD_LOAD_H

#include "common/env/alfworld_int.h"

/* Read a *.tw-pddl file, parse its three parts and ground it into `arena`. `*solvable` is the
 * file's "solvable" flag (1/0) or -1 when absent. Errors name the file and the part:
 * PV_ERR_IO (cannot open), PV_ERR_DATA / PV_ERR_PARSE (malformed), PV_ERR_LIMIT, PV_ERR_NOMEM.
 * `ws`: grounding scratch or NULL. */
pv_err_t pv_alf_read_game(pv_alf_gws_t *ws, pv_arena_t *arena, const char *path,
                          pv_alf_game_t **out, int *solvable, pv_errmsg_t *em);

/* Game files of a data path (one file, or a directory searched recursively, sorted). */
typedef struct pv_alf_files {
    uint32_t n, cap;
    char **path;
    uint8_t *split; /* bit 0: train, bit 1: test */
} pv_alf_files_t;

pv_err_t pv_alf_scan(const char *data_path, pv_alf_files_t *f, pv_errmsg_t *em);
void pv_alf_files_free(pv_alf_files_t *f);

#endif
