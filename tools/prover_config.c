/* prover-config - print the effective configuration of a run, or the reference of all keys.
 *
 *   prover-config [--config FILE] [section.key=value ...]   effective YAML on stdout
 *   prover-config [...] --get section.key [--get ...]        values, one per line (scripts)
 *   prover-config --describe                                 Markdown reference (docs/config.md)
 *
 * Exit status 0, or 2 with a message naming the bad key/file/line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--describe") == 0) {
        pv_config_describe(stdout);
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf(
            "usage: prover-config [--config FILE] [section.key=value ...] [--get section.key ...]\n"
            "       prover-config --describe\n"
            "Prints the effective configuration as YAML, the values of the --get keys one per\n"
            "line, or the reference of every key.\n");
        return 0;
    }
    pv_config_t cfg;
    pv_errmsg_t em = {{0}};
    pv_config_defaults(&cfg);
    /* --get KEY pairs are taken out before the config arguments are parsed */
    char **cargv = calloc((size_t)argc + 1, sizeof *cargv);
    const char **keys = calloc((size_t)argc + 1, sizeof *keys);
    int cargc = 0, n_keys = 0, status = 0;
    if (!cargv || !keys)
        return 1;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && strcmp(argv[i], "--get") == 0 && i + 1 < argc)
            keys[n_keys++] = argv[++i];
        else
            cargv[cargc++] = argv[i];
    }
    pv_err_t rc = pv_config_from_args(&cfg, cargc, cargv, NULL, NULL, &em);
    for (int i = 0; rc == PV_OK && i < n_keys; i++) {
        char value[PV_CONFIG_STR_MAX + 8];
        if ((rc = pv_config_get_text(&cfg, keys[i], value, sizeof value, &em)) == PV_OK)
            printf("%s\n", value);
    }
    if (rc != PV_OK) {
        fprintf(stderr, "prover-config: %s\n", em.text[0] ? em.text : pv_strerror(rc));
        status = 2;
    } else if (n_keys == 0 && pv_config_write_yaml(&cfg, stdout) != PV_OK) {
        status = 1;
    }
    free(cargv);
    free(keys);
    return status;
}
