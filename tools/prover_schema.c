/* prover-schema - print the wire schema documents generated from common/wire/wire_schema.h.
 *
 *   prover-schema --markdown    docs/wire-schema.md
 *   prover-schema --json        docs/wire-schema.json
 *   prover-schema --fuzz-dict   a libFuzzer dictionary of every key (tests/fuzz/run-fuzz)
 *
 * tests/common/wire registers tests that diff the committed documents against this output.
 */
#include <stdio.h>
#include <string.h>

#include "common/wire/wire_desc.h"

static int s_usage(void)
{
    fprintf(stderr, "usage: prover-schema --markdown | --json | --fuzz-dict\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return s_usage();
    pv_err_t err;
    if (strcmp(argv[1], "--markdown") == 0) {
        err = pv_wire_schema_markdown(stdout);
    } else if (strcmp(argv[1], "--fuzz-dict") == 0) {
        err = pv_wire_schema_fuzz_dict(stdout);
    } else if (strcmp(argv[1], "--json") == 0) {
        json_t *j = NULL;
        err = pv_wire_schema_json(&j);
        if (!err && (json_dumpf(j, stdout, JSON_INDENT(2)) != 0 || fputc('\n', stdout) == EOF))
            err = PV_ERR_IO;
        json_decref(j);
    } else {
        return s_usage();
    }
    if (fflush(stdout) != 0)
        err = PV_ERR_IO;
    if (err) {
        fprintf(stderr, "prover-schema: %s\n", pv_strerror(err));
        return 1;
    }
    return 0;
}
