/* fs.h - file-system helpers several tools and roles need.
 *
 * pv_mkdirs: `mkdir -p` - create `path` and any missing parents; parents get 0755, `path`
 * itself `mode` (an existing directory is left as it is).
 */
#ifndef PV_FS_H
#define PV_FS_H

#include <sys/types.h>

#include "common/err.h"

/* Create `path` and its missing parents (mkdir -p). Errors: PV_ERR_IO naming the directory
 * that could not be made and why, PV_ERR_LIMIT (path longer than 4095 bytes). */
pv_err_t pv_mkdirs(const char *path, mode_t mode, pv_errmsg_t *em);

#endif
