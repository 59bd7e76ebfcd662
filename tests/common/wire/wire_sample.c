/* wire-sample - deterministic sample messages for the Python interop test and the fuzz corpus.
 *
 *   wire-sample write DIR [SEED [COUNT]]
 *       For every message type writes COUNT random schema-valid messages (seeded pv_rng_t)
 *       as DIR/<TYPE>.msgpack (COUNT = 1) or DIR/<TYPE>-<i>.msgpack, each with the values it
 *       holds as DIR/<TYPE>[-<i>].json, taken from the C struct before encoding.
 *   wire-sample dump FILE...
 *       Decodes each file and prints one JSON line per file: the message (pv_wire_msg_to_json)
 *       or {"file": ..., "error": "<PV_ERR name>", "detail": ...}.
 * Exit status: 0, or 1 on a usage or I/O error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire/wire_desc.h"
#include "wire_fill.h"

static int s_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "wire-sample: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

static int s_write(const char *dir, uint64_t seed, int count)
{
    pv_arena_t *arena = NULL;
    pv_wire_buf_t buf;
    pv_wire_buf_init(&buf, 0);
    if (pv_arena_new(0, 0, &arena) != PV_OK)
        return 1;
    pv_rng_t rng;
    pv_rng_seed(&rng, seed, 0);
    size_t n_types;
    const pv_wire_msgdesc_t *types = pv_wire_messages(&n_types);
    int rc = 0;
    for (size_t t = 0; t < n_types && !rc; t++) {
        for (int i = 0; i < count && !rc; i++) {
            pv_wire_msg_t m;
            pv_errmsg_t em;
            json_t *j = NULL;
            char path[4200], stem[4096];
            if (count == 1)
                snprintf(stem, sizeof stem, "%s/%s", dir, types[t].name);
            else
                snprintf(stem, sizeof stem, "%s/%s-%d", dir, types[t].name, i);
            if (!wire_fill_msg(&m, types[t].type, &rng, arena, 3, 24) ||
                pv_wire_encode(&m, NULL, &buf, &em) != PV_OK || pv_wire_msg_to_json(&m, &j)) {
                fprintf(stderr, "wire-sample: %s: cannot build a sample\n", types[t].name);
                rc = 1;
                break;
            }
            snprintf(path, sizeof path, "%s.msgpack", stem);
            rc = s_write_file(path, buf.data, buf.len);
            snprintf(path, sizeof path, "%s.json", stem);
            if (!rc && json_dump_file(j, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17)) != 0) {
                fprintf(stderr, "wire-sample: cannot write %s\n", path);
                rc = 1;
            }
            json_decref(j);
            pv_arena_reset(arena);
        }
    }
    pv_wire_buf_free(&buf);
    pv_arena_destroy(&arena);
    return rc;
}

static int s_dump(int n, char **files)
{
    pv_arena_t *arena = NULL;
    pv_wire_dec_t *dec = NULL;
    if (pv_arena_new(0, 0, &arena) != PV_OK || pv_wire_dec_new(NULL, &dec) != PV_OK)
        return 1;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        FILE *f = fopen(files[i], "rb");
        uint8_t *data = NULL;
        long len = -1;
        if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
            fseek(f, 0, SEEK_SET) == 0) {
            data = malloc((size_t)len + 1);
            if (!data || fread(data, 1, (size_t)len, f) != (size_t)len)
                len = -1;
        }
        if (f)
            fclose(f);
        if (len < 0) {
            fprintf(stderr, "wire-sample: cannot read %s\n", files[i]);
            free(data);
            rc = 1;
            break;
        }
        pv_wire_msg_t m;
        pv_errmsg_t em = {{0}};
        json_t *j = NULL;
        pv_err_t err = pv_wire_decode(dec, data, (size_t)len, arena, &m, &em);
        if (!err)
            err = pv_wire_msg_to_json(&m, &j);
        if (err)
            j = json_pack("{s:s, s:s, s:s}", "file", files[i], "error", pv_errname(err), "detail",
                          em.text);
        json_dumpf(j, stdout, JSON_COMPACT | JSON_REAL_PRECISION(17));
        fputc('\n', stdout);
        json_decref(j);
        free(data);
        pv_arena_reset(arena);
    }
    pv_wire_dec_destroy(&dec);
    pv_arena_destroy(&arena);
    return fflush(stdout) == 0 ? rc : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "write") == 0) {
        uint64_t seed = argc >= 4 ? strtoull(argv[3], NULL, 10) : 1;
        int count = argc >= 5 ? atoi(argv[4]) : 1;
        return s_write(argv[2], seed, count > 0 ? count : 1);
    }
    if (argc >= 3 && strcmp(argv[1], "dump") == 0)
        return s_dump(argc - 2, argv + 2);
    fprintf(stderr, "usage: wire-sample write DIR [SEED [COUNT]] | dump FILE...\n");
    return 1;
}
