/* peer_table.c - peer registry; see peer_table.h. */
#include "broker/peer_table.h"

#include <stdlib.h>
#include <string.h>

#define S_FIRST_PEERS 16u

/* Two independent 64-bit FNV-1a hashes (different offset bases) of the routing id: a
 * 128-bit key whose accidental collision is out of reach for any realistic peer count. */
static pv_key_t s_key(const pv_routing_id_t *id)
{
    uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull ^ id->len;
    for (uint8_t i = 0; i < id->len; i++) {
        a = (a ^ id->bytes[i]) * 0x100000001b3ull;
        b = (b ^ id->bytes[i]) * 0x100000001b3ull;
    }
    return (pv_key_t){.a = a, .b = b};
}

static void s_chain_free(pv_peer_table_t *self, uint32_t from, uint32_t to)
{
    for (uint32_t i = to; i-- > from;) {
        self->peers[i].kind = PV_PEER_FREE;
        self->peers[i].next_free = self->free_head;
        self->free_head = (int32_t)i;
    }
}

pv_err_t pv_peer_table_init(pv_peer_table_t *self, uint32_t max_peers)
{
    memset(self, 0, sizeof *self);
    self->free_head = -1;
    if (max_peers == 0 || max_peers > (1u << 24))
        return PV_ERR_INVAL;
    self->max_peers = max_peers;
    self->cap = max_peers < S_FIRST_PEERS ? max_peers : S_FIRST_PEERS;
    self->peers = calloc(self->cap, sizeof *self->peers);
    if (!self->peers || pv_key_index_init(&self->index, self->cap) != PV_OK) {
        pv_peer_table_fini(self);
        return PV_ERR_NOMEM;
    }
    s_chain_free(self, 0, self->cap);
    return PV_OK;
}

void pv_peer_table_fini(pv_peer_table_t *self)
{
    if (!self)
        return;
    free(self->peers);
    pv_key_index_fini(&self->index);
    memset(self, 0, sizeof *self);
    self->free_head = -1;
}

int32_t pv_peer_find(const pv_peer_table_t *self, const pv_routing_id_t *id)
{
    int32_t s = pv_key_get(&self->index, s_key(id));
    return s == PV_KEY_ABSENT ? -1 : s;
}

pv_err_t pv_peer_add(pv_peer_table_t *self, const pv_routing_id_t *id, pv_peer_kind_t kind,
                     int64_t now_us, int32_t *slot)
{
    if (self->n_live >= self->max_peers)
        return PV_ERR_FULL;
    if (self->free_head < 0) {
        uint32_t cap = self->cap * 2u > self->max_peers ? self->max_peers : self->cap * 2u;
        pv_broker_peer_t *peers = realloc(self->peers, (size_t)cap * sizeof *peers);
        if (!peers)
            return PV_ERR_NOMEM;
        memset(peers + self->cap, 0, (size_t)(cap - self->cap) * sizeof *peers);
        self->peers = peers;
        s_chain_free(self, self->cap, cap);
        self->cap = cap;
    }
    if (pv_key_reserve(&self->index) != PV_OK)
        return PV_ERR_NOMEM;
    int32_t s = self->free_head;
    pv_broker_peer_t *p = &self->peers[s];
    self->free_head = p->next_free;
    memset(p, 0, sizeof *p);
    p->id = *id;
    p->kind = (uint8_t)kind;
    p->registered_us = p->last_seen_us = p->last_sent_us = now_us;
    p->next_free = -1;
    pv_job_list_init(&p->leases);
    pv_key_put(&self->index, s_key(id), s); /* cannot fail after reserve */
    self->n_live++;
    *slot = s;
    return PV_OK;
}

void pv_peer_remove(pv_peer_table_t *self, int32_t slot)
{
    pv_broker_peer_t *p = &self->peers[slot];
    pv_key_del(&self->index, s_key(&p->id));
    p->kind = PV_PEER_FREE;
    p->next_free = self->free_head;
    self->free_head = slot;
    self->n_live--;
}
