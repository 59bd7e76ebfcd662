/* test_fts.c - the shared FTS5 index: BM25 ranking sanity (rare terms, term frequency,
 * document length), Porter stemming, no-match behaviour, readers on one shared in-memory
 * database, and free text with FTS5 syntax characters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "common/env/fts.h"

static const char *const s_docs[] = {
    /* 1 */ "red running shoes with arch support",
    /* 2 */ "blue running shoes",
    /* 3 */ "red red red wine glass",
    /* 4 */
    "a very long description of a red lamp with many many many many many many words "
    "that dilute the term frequency of red in this document considerably indeed",
    /* 5 */ "green tea organic",
    /* 6 */ "shoe horn",
};

static pv_fts_t *s_index(void)
{
    pv_fts_t *f = NULL;
    pv_errmsg_t em;
    assert_int_equal(pv_fts_new("test", &f, &em), PV_OK);
    assert_int_equal(pv_fts_begin(f, &em), PV_OK);
    for (size_t i = 0; i < sizeof s_docs / sizeof s_docs[0]; i++)
        assert_int_equal(pv_fts_add(f, (int64_t)i + 1, s_docs[i], &em), PV_OK);
    assert_int_equal(pv_fts_finish(f, &em), PV_OK);
    return f;
}

static void test_bm25_ranking(void **state)
{
    (void)state;
    pv_fts_t *f = s_index();
    pv_fts_reader_t *r = NULL;
    assert_int_equal(pv_fts_reader_new(f, &r), PV_OK);
    int64_t ids[8];
    uint32_t n;
    /* "arch" occurs in one document only */
    assert_int_equal(pv_fts_search(r, "arch", 8, ids, &n), PV_OK);
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], 1);
    /* term frequency: doc 3 says red three times in a short text */
    assert_int_equal(pv_fts_search(r, "red", 8, ids, &n), PV_OK);
    assert_int_equal(n, 3);
    assert_int_equal(ids[0], 3);
    /* length normalisation: the long document ranks last for "red" */
    assert_int_equal(ids[2], 4);
    /* an OR query: the document with both words beats the shorter one with one of them.
     * (FTS5's idf is log((N - n + 0.5) / (n + 0.5)), so a word in half the documents, like
     * "red" here, weighs almost nothing.) */
    assert_int_equal(pv_fts_search(r, "arch running", 8, ids, &n), PV_OK);
    assert_int_equal(n, 2);
    assert_int_equal(ids[0], 1);
    assert_int_equal(ids[1], 2);
    /* Porter stemming: "shoes" finds "shoe horn" too */
    assert_int_equal(pv_fts_search(r, "shoes", 8, ids, &n), PV_OK);
    assert_int_equal(n, 3);
    /* the limit */
    assert_int_equal(pv_fts_search(r, "shoes", 2, ids, &n), PV_OK);
    assert_int_equal(n, 2);
    /* nothing to match / no word at all */
    assert_int_equal(pv_fts_search(r, "zebra", 8, ids, &n), PV_OK);
    assert_int_equal(n, 0);
    assert_int_equal(pv_fts_search(r, " ;-) ", 8, ids, &n), PV_OK);
    assert_int_equal(n, 0);
    /* FTS5 operators in user text are words, not syntax */
    assert_int_equal(pv_fts_search(r, "tea\" OR NEAR(glass* AND", 8, ids, &n), PV_OK);
    assert_true(n >= 2);
    pv_fts_reader_destroy(&r);
    assert_null(r);
    pv_fts_destroy(&f);
    assert_null(f);
}

static void test_two_readers_two_indexes(void **state)
{
    (void)state;
    pv_fts_t *a = s_index(), *b = NULL;
    pv_errmsg_t em;
    assert_int_equal(pv_fts_new("test", &b, &em), PV_OK);
    assert_int_equal(pv_fts_begin(b, &em), PV_OK);
    assert_int_equal(pv_fts_add(b, 7, "zebra crossing", &em), PV_OK);
    assert_int_equal(pv_fts_finish(b, &em), PV_OK);
    pv_fts_reader_t *r1 = NULL, *r2 = NULL, *rb = NULL;
    assert_int_equal(pv_fts_reader_new(a, &r1), PV_OK);
    assert_int_equal(pv_fts_reader_new(a, &r2), PV_OK);
    assert_int_equal(pv_fts_reader_new(b, &rb), PV_OK);
    int64_t ids[8];
    uint32_t n;
    /* each index is its own database: "zebra" only in b */
    assert_int_equal(pv_fts_search(r1, "zebra", 8, ids, &n), PV_OK);
    assert_int_equal(n, 0);
    assert_int_equal(pv_fts_search(rb, "zebra", 8, ids, &n), PV_OK);
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], 7);
    /* two readers of one index agree */
    int64_t ids2[8];
    uint32_t n2;
    assert_int_equal(pv_fts_search(r1, "red shoes", 8, ids, &n), PV_OK);
    assert_int_equal(pv_fts_search(r2, "red shoes", 8, ids2, &n2), PV_OK);
    assert_int_equal(n, n2);
    assert_memory_equal(ids, ids2, n * sizeof ids[0]);
    pv_fts_reader_destroy(&r1);
    pv_fts_reader_destroy(&r2);
    pv_fts_reader_destroy(&rb);
    pv_fts_destroy(&a);
    pv_fts_destroy(&b);
    pv_fts_destroy(&b); /* NULL-safe */
}

/* The threading rule of fts.h: one reader per thread on a shared index, no lock of ours. */
typedef struct s_job {
    pv_fts_t *fts;
    int64_t first[8];
    uint32_t n_first;
    int mismatches;
} s_job_t;

static void *s_worker(void *arg)
{
    s_job_t *job = arg;
    pv_fts_reader_t *r = NULL;
    if (pv_fts_reader_new(job->fts, &r) != PV_OK) {
        job->mismatches = -1;
        return NULL;
    }
    static const char *const queries[] = {"red shoes", "green tea", "arch running", "wine"};
    for (int i = 0; i < 2000; i++) {
        int64_t ids[8];
        uint32_t n;
        if (pv_fts_search(r, queries[i % 4], 8, ids, &n) != PV_OK)
            job->mismatches++;
        if (i % 4 == 0 && (n != job->n_first || memcmp(ids, job->first, n * sizeof ids[0])))
            job->mismatches++;
    }
    pv_fts_reader_destroy(&r);
    return NULL;
}

static void test_concurrent_readers(void **state)
{
    (void)state;
    pv_fts_t *f = s_index();
    pv_fts_reader_t *r = NULL;
    assert_int_equal(pv_fts_reader_new(f, &r), PV_OK);
    s_job_t jobs[4] = {{0}};
    for (int i = 0; i < 4; i++) {
        jobs[i].fts = f;
        assert_int_equal(pv_fts_search(r, "red shoes", 8, jobs[i].first, &jobs[i].n_first), PV_OK);
    }
    pv_fts_reader_destroy(&r);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, s_worker, &jobs[i]), 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(jobs[i].mismatches, 0);
    }
    pv_fts_destroy(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bm25_ranking),
        cmocka_unit_test(test_two_readers_two_indexes),
        cmocka_unit_test(test_concurrent_readers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
