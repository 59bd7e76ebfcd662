/* prover-config - print the effective configuration of a run, or the reference of all keys.
 *
 *   prover-config [--config FILE] [section.key=value ...]   effective YAML on stdout
 *   prover-config --describe                                 Markdown reference (docs/config.md)
 *
 * Exit status 0, or 2 with a message naming the bad key/file/line.
 */
#include <stdio.h>
#include <string.h>

#include "common/config.h"

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--describe") == 0) {
        pv_config_describe(stdout);
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: prover-config [--config FILE] [section.key=value ...]\n"
               "       prover-config --describe\n"
               "Prints the effective configuration as YAML, or the reference of every key.\n");
        return 0;
    }
    pv_config_t cfg;
    pv_errmsg_t em = {{0}};
    pv_config_defaults(&cfg);
    pv_err_t rc = pv_config_from_args(&cfg, argc, argv, NULL, NULL, &em);
    if (rc != PV_OK) {
        fprintf(stderr, "prover-config: %s\n", em.text[0] ? em.text : pv_strerror(rc));
        return 2;
    }
    return pv_config_write_yaml(&cfg, stdout) == PV_OK ? 0 : 1;
}
