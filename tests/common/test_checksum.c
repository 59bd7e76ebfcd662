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

/* The digest of src's len bytes added in uneven pieces (stride picks their sizes); with dst,
 * through the fused copy, which also copies them there. */
static uint64_t s_in_pieces(pv_checksum_state_t *st, unsigned char *dst, const unsigned char *src,
                            size_t len, size_t stride)
{
    pv_checksum_reset(st);
    for (size_t off = 0; off < len;) {
        size_t piece = 1 + (off * stride + 13) % 70001;
        if (piece > len - off)
            piece = len - off;
        if (dst)
            pv_checksum_copy_update(st, dst + off, src + off, piece);
        else
            pv_checksum_update(st, src + off, piece);
        off += piece;
    }
    return pv_checksum_digest(st);
}

/* One-shot and streaming, at an unaligned address. */
static void s_check_stream(pv_checksum_state_t *st, size_t len, uint64_t seed)
{
    unsigned char *p = s_random(len, seed);
    const unsigned char *src = p + 3;
    uint64_t want = XXH3_64bits(src, len);
    assert_true(pv_checksum(src, len) == want);
    assert_true(s_in_pieces(st, NULL, src, len, 7919) == want);
    free(p);
}

/* The fused copy, whole and in pieces: the copy is exact and writes nothing outside it, the
 * digest is XXH3_64bits of the bytes; one byte changed in the source changes it. */
static void s_check_copy(pv_checksum_state_t *st, size_t len, uint64_t seed)
{
    unsigned char *p = s_random(len, seed), *q = malloc(len + 64);
    assert_non_null(q);
    const unsigned char *src = p + 5;
    unsigned char *dst = q + 11; /* unaligned, differently from src */
    uint64_t want = XXH3_64bits(src, len);
    for (int pass = 0; pass < 2; pass++) {
        memset(q, 0xa5, len + 64);
        uint64_t got;
        if (pass == 0) { /* one call for the whole */
            pv_checksum_reset(st);
            pv_checksum_copy_update(st, dst, src, len);
            got = pv_checksum_digest(st);
        } else {
            got = s_in_pieces(st, dst, src, len, 104729);
        }
        assert_true(got == want);
        if (len > 0)
            assert_memory_equal(dst, src, len);
        for (size_t i = 0; i < len + 64; i++)
            if (i < 11 || i >= 11 + len)
                assert_int_equal(q[i], 0xa5);
    }
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

static void test_oneshot_and_streaming_match_libxxhash(void **state)
{
    (void)state;
    pv_checksum_state_t *st = NULL;
    assert_int_equal(pv_checksum_new(&st), PV_OK);
    for (size_t k = 0; k < sizeof s_sizes / sizeof *s_sizes; k++)
        s_check_stream(st, s_sizes[k], 100 + k);
    pv_checksum_destroy(&st);
    assert_null(st);
}

static void test_copy_update_copies_and_matches_libxxhash(void **state)
{
    (void)state;
    pv_checksum_state_t *st = NULL;
    assert_int_equal(pv_checksum_new(&st), PV_OK);
    for (size_t k = 0; k < sizeof s_sizes / sizeof *s_sizes; k++)
        s_check_copy(st, s_sizes[k], 200 + k);
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
