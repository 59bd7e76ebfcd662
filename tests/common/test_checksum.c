/* test_checksum.c - the version checksum against libxxhash's own XXH3_64bits (the shared
 * library, not the header-only build common/checksum.c uses): one-shot, streaming in pieces,
 * and the fused copy+hash of the same-host weights path (pv_checksum_copy_update), over odd
 * sizes at unaligned addresses on both sides. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

#include "common/checksum.h"
#include "common/rng.h"

/* sizes around XXH3's internal boundaries (16, 128, 240 bytes, its 1 KiB stripes block and
 * 256 KiB internal buffer), the fused copy's 32 KiB pieces, and a few MiB */
static const size_t s_sizes[] = {0,      1,      3,     17,      129,           241,
                                 1023,   1025,   32767, 32768,   32769,         65537,
                                 262143, 262145, 99991, 1 << 20, (1 << 20) + 7, (3 << 20) + 12345};

static unsigned char *s_random(size_t len, uint64_t seed)
{
    unsigned char *p = malloc(len + 64);
    assert_non_null(p);
    pv_rng_t rng;
    pv_rng_seed(&rng, seed, 3);
    for (size_t i = 0; i < len + 64; i++)
        p[i] = (unsigned char)pv_rng_bounded(&rng, 256);
    return p;
}

static void test_oneshot_and_streaming_match_libxxhash(void **state)
{
    (void)state;
    pv_checksum_state_t *st = NULL;
    assert_int_equal(pv_checksum_new(&st), PV_OK);
    for (size_t k = 0; k < sizeof s_sizes / sizeof *s_sizes; k++) {
        size_t len = s_sizes[k];
        unsigned char *p = s_random(len, 100 + k);
        const unsigned char *src = p + 3; /* unaligned */
        uint64_t want = XXH3_64bits(src, len);
        assert_true(pv_checksum(src, len) == want);
        pv_checksum_reset(st);
        for (size_t off = 0; off < len;) { /* pieces of uneven sizes */
            size_t piece = 1 + (off * 7919 + 13) % 70001;
            if (piece > len - off)
                piece = len - off;
            pv_checksum_update(st, src + off, piece);
            off += piece;
        }
        assert_true(pv_checksum_digest(st) == want);
        free(p);
    }
    pv_checksum_destroy(&st);
    assert_null(st);
}

/* The fused copy: the copy is exact (and writes nothing past the end) and the digest is
 * XXH3_64bits of the bytes, when called once for the whole and in uneven pieces. */
static void test_copy_update_copies_and_matches_libxxhash(void **state)
{
    (void)state;
    pv_checksum_state_t *st = NULL;
    assert_int_equal(pv_checksum_new(&st), PV_OK);
    for (size_t k = 0; k < sizeof s_sizes / sizeof *s_sizes; k++) {
        size_t len = s_sizes[k];
        unsigned char *p = s_random(len, 200 + k);
        unsigned char *q = malloc(len + 64);
        assert_non_null(q);
        const unsigned char *src = p + 5;
        unsigned char *dst = q + 11; /* unaligned, differently from src */
        uint64_t want = XXH3_64bits(src, len);
        for (int pass = 0; pass < 2; pass++) {
            memset(q, 0xa5, len + 64);
            pv_checksum_reset(st);
            if (pass == 0) {
                pv_checksum_copy_update(st, dst, src, len);
            } else {
                for (size_t off = 0; off < len;) {
                    size_t piece = 1 + (off * 104729 + 7) % 50021;
                    if (piece > len - off)
                        piece = len - off;
                    pv_checksum_copy_update(st, dst + off, src + off, piece);
                    off += piece;
                }
            }
            assert_true(pv_checksum_digest(st) == want);
            if (len > 0)
                assert_memory_equal(dst, src, len);
            for (size_t i = 0; i < 11; i++)
                assert_int_equal(q[i], 0xa5);
            for (size_t i = 11 + len; i < len + 64; i++)
                assert_int_equal(q[i], 0xa5);
        }
        /* one byte changed in the source changes the digest of the copy */
        if (len > 0) {
            p[5 + len / 2] ^= 0x40;
            pv_checksum_reset(st);
            pv_checksum_copy_update(st, dst, src, len);
            assert_true(pv_checksum_digest(st) != want);
            assert_true(pv_checksum_digest(st) == XXH3_64bits(src, len));
        }
        free(q);
        free(p);
    }
    pv_checksum_destroy(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oneshot_and_streaming_match_libxxhash),
        cmocka_unit_test(test_copy_update_copies_and_matches_libxxhash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
