/* fts.h - a full-text index (SQLite FTS5, BM25) built once per model, searched by many
 * instances.
 *
 * Threading rule: the index lives in an in-memory SQLite database on the "memdb" VFS
 * under a name unique to this index ("/pv_fts_<kind>_<address>"), which SQLite lets several
 * connections of one process share. The model side (pv_fts_t) holds the connection that
 * built it, keeps the database alive, and is read-only after pv_fts_finish(). Each
 * environment instance opens its own read-only connection (pv_fts_reader_t) with its own
 * prepared statement, so instances on different threads search at the same time without a
 * lock of ours; one reader must not be used by two threads at once.
 *
 * Ranking: FTS5's built-in bm25() (k1 = 1.2, b = 0.75, fixed by SQLite; idf =
 * log((N - n + 0.5) / (n + 0.5)), floored just above 0) with the "porter unicode61
 * remove_diacritics 2" tokenizer; ties go to the lower rowid. Queries OR their words minus
 * Lucene's English stop words (pv_text_fts_query), as Pyserini's default analyser does for
 * WebShop's and Search-R1's BM25; Pyserini's k1 = 0.9, b = 0.4 and Lucene's idf differ, so
 * the order of close hits differs from theirs.
 *
 * Allocation: SQLite allocates internally while it runs a query (FTS5 parses the query and
 * builds cursors), so a search is not allocation-free; everything of ours is prepared at
 * reader creation.
 */
#ifndef PV_FTS_H
#define PV_FTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef struct pv_fts pv_fts_t;
typedef struct pv_fts_reader pv_fts_reader_t;

/* Create an empty index; `tag` (e.g. "webshop") goes into the database name.
 * Errors: PV_ERR_NOMEM, PV_ERR_INTERNAL (SQLite without FTS5 or memdb; detail in em). */
pv_err_t pv_fts_new(const char *tag, pv_fts_t **out, pv_errmsg_t *em);

/* Start a bulk load (one transaction). */
pv_err_t pv_fts_begin(pv_fts_t *self, pv_errmsg_t *em);

/* Add document `rowid` (>= 1, unique) with searchable `text`. */
pv_err_t pv_fts_add(pv_fts_t *self, int64_t rowid, const char *text, pv_errmsg_t *em);

/* Commit the bulk load and merge the index; no more additions after this. */
pv_err_t pv_fts_finish(pv_fts_t *self, pv_errmsg_t *em);

/* Free the index; clears *fts. Every reader must be closed first. NULL-safe. */
void pv_fts_destroy(pv_fts_t **fts);

/* Open a reader on a finished index. Errors: PV_ERR_NOMEM, PV_ERR_INTERNAL. */
pv_err_t pv_fts_reader_new(const pv_fts_t *fts, pv_fts_reader_t **out);

/* Close a reader; clears *reader. NULL-safe. */
void pv_fts_reader_destroy(pv_fts_reader_t **reader);

/* Search free `text` (turned into an OR of its words, see pv_text_fts_query) and write the
 * rowids of the best `limit` documents, best first, into ids[0..*n). Text without any word
 * gives *n = 0. Errors: PV_ERR_INTERNAL (SQLite failed). */
pv_err_t pv_fts_search(pv_fts_reader_t *self, const char *text, uint32_t limit, int64_t *ids,
                       uint32_t *n);

#endif
