/* fts.c - shared FTS5 index over an in-memory database; see fts.h. */
#include "common/env/fts.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/env/text_util.h"

#define S_MAX_TERMS 64
#define S_QUERY_CAP 4096

struct pv_fts {
    sqlite3 *db;
    sqlite3_stmt *insert;
    char uri[96];
};

struct pv_fts_reader {
    sqlite3 *db;
    sqlite3_stmt *query;
    char match[S_QUERY_CAP];
};

static pv_err_t s_sql_err(pv_errmsg_t *em, sqlite3 *db, const char *what)
{
    return pv_errf(em, PV_ERR_INTERNAL, "sqlite: %s: %s", what,
                   db ? sqlite3_errmsg(db) : "cannot open");
}

pv_err_t pv_fts_new(const char *tag, pv_fts_t **out, pv_errmsg_t *em)
{
    pv_fts_t *self = calloc(1, sizeof *self);
    if (!self)
        return PV_ERR_NOMEM;
    snprintf(self->uri, sizeof self->uri, "file:/pv_fts_%s_%p?vfs=memdb", tag, (void *)self);
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
    pv_err_t rc = PV_OK;
    if (sqlite3_open_v2(self->uri, &self->db, flags, NULL) != SQLITE_OK) {
        rc = s_sql_err(em, self->db, "open in-memory index");
        goto fail;
    }
    const char *ddl = "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                      "CREATE VIRTUAL TABLE doc USING fts5(body, "
                      "tokenize='porter unicode61 remove_diacritics 2');";
    if (sqlite3_exec(self->db, ddl, NULL, NULL, NULL) != SQLITE_OK) {
        rc = s_sql_err(em, self->db, "create FTS5 table");
        goto fail;
    }
    if (sqlite3_prepare_v2(self->db, "INSERT INTO doc(rowid, body) VALUES(?, ?)", -1, &self->insert,
                           NULL) != SQLITE_OK) {
        rc = s_sql_err(em, self->db, "prepare insert");
        goto fail;
    }
    *out = self;
    return PV_OK;
fail:
    pv_fts_destroy(&self);
    return rc;
}

pv_err_t pv_fts_begin(pv_fts_t *self, pv_errmsg_t *em)
{
    if (sqlite3_exec(self->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return s_sql_err(em, self->db, "begin");
    return PV_OK;
}

pv_err_t pv_fts_add(pv_fts_t *self, int64_t rowid, const char *text, pv_errmsg_t *em)
{
    sqlite3_reset(self->insert);
    sqlite3_bind_int64(self->insert, 1, rowid);
    sqlite3_bind_text(self->insert, 2, text, -1, SQLITE_STATIC);
    int rc = sqlite3_step(self->insert);
    sqlite3_clear_bindings(self->insert);
    if (rc != SQLITE_DONE)
        return s_sql_err(em, self->db, "insert document");
    return PV_OK;
}

pv_err_t pv_fts_finish(pv_fts_t *self, pv_errmsg_t *em)
{
    if (sqlite3_exec(self->db, "COMMIT; INSERT INTO doc(doc) VALUES('optimize');", NULL, NULL,
                     NULL) != SQLITE_OK)
        return s_sql_err(em, self->db, "commit index");
    sqlite3_finalize(self->insert);
    self->insert = NULL;
    return PV_OK;
}

void pv_fts_destroy(pv_fts_t **fts)
{
    if (!fts || !*fts)
        return;
    sqlite3_finalize((*fts)->insert);
    sqlite3_close((*fts)->db);
    free(*fts);
    *fts = NULL;
}

pv_err_t pv_fts_reader_new(const pv_fts_t *fts, pv_fts_reader_t **out)
{
    pv_fts_reader_t *self = calloc(1, sizeof *self);
    if (!self)
        return PV_ERR_NOMEM;
    int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(fts->uri, &self->db, flags, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(self->db,
                           "SELECT rowid FROM doc WHERE doc MATCH ?1 ORDER BY rank, rowid "
                           "LIMIT ?2",
                           -1, SQLITE_PREPARE_PERSISTENT, &self->query, NULL) != SQLITE_OK) {
        pv_fts_reader_destroy(&self);
        return PV_ERR_INTERNAL;
    }
    *out = self;
    return PV_OK;
}

void pv_fts_reader_destroy(pv_fts_reader_t **reader)
{
    if (!reader || !*reader)
        return;
    sqlite3_finalize((*reader)->query);
    sqlite3_close((*reader)->db);
    free(*reader);
    *reader = NULL;
}

pv_err_t pv_fts_search(pv_fts_reader_t *self, const char *text, uint32_t limit, int64_t *ids,
                       uint32_t *n)
{
    *n = 0;
    if (pv_text_fts_query(self->match, sizeof self->match, text, S_MAX_TERMS) == 0 || !limit)
        return PV_OK;
    sqlite3_reset(self->query);
    sqlite3_bind_text(self->query, 1, self->match, -1, SQLITE_STATIC);
    sqlite3_bind_int64(self->query, 2, limit);
    int rc;
    while ((rc = sqlite3_step(self->query)) == SQLITE_ROW && *n < limit)
        ids[(*n)++] = sqlite3_column_int64(self->query, 0);
    sqlite3_reset(self->query);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? PV_OK : PV_ERR_INTERNAL;
}
