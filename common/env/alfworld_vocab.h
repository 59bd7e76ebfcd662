/* alfworld_vocab.h - the ALFRED vocabulary the generator draws from (internal).
 *
 * Object and receptacle types, which receptacle types can hold which object types
 * (VAL_RECEPTACLE_OBJECTS, the source of canContain facts), the object types that can be
 * heated, cooled, cleaned and sliced (VAL_ACTION_OBJECTS), movable receptacle objects and
 * openable receptacles, copied from alfworld/alfworld alfworld/gen/constants.py (commit
 * ca98194, MIT licence). CoffeeTable, DiningTable and SideTable hold what ALFRED's TableTop
 * holds. The room tables (which receptacles a kitchen, bathroom, bedroom or living room has,
 * how many of each) are ours, written after ALFRED's scenes; GOALS_VALID says which room types
 * each task type uses.
 */
#ifndef PV_ALFWORLD_VOCAB_H
#define PV_ALFWORLD_VOCAB_H

#include <stdint.h>

#define PV_ALF_VOCAB_N_OBJ  56
#define PV_ALF_VOCAB_N_REC  29
#define PV_ALF_VOCAB_N_ROOM 4

typedef struct pv_alf_vocab_rec {
    const char *name;
    uint8_t openable;
    uint64_t holds; /* bit i: can contain pv_alf_vocab_obj[i] */
} pv_alf_vocab_rec_t;

/* A receptacle type a room can have: weight when filling the room, most instances. */
typedef struct pv_alf_vocab_slot {
    uint8_t rec; /* index into pv_alf_vocab_rec */
    uint8_t weight;
    uint8_t max;
} pv_alf_vocab_slot_t;

typedef struct pv_alf_vocab_room {
    const char *name;
    uint8_t min_recep, max_recep; /* default size range */
    uint8_t n_slots;
    pv_alf_vocab_slot_t slots[16];
} pv_alf_vocab_room_t;

extern const char *const pv_alf_vocab_obj[PV_ALF_VOCAB_N_OBJ];
extern const uint64_t pv_alf_vocab_heatable, pv_alf_vocab_coolable, pv_alf_vocab_cleanable,
    pv_alf_vocab_sliceable, pv_alf_vocab_recobj;
extern const pv_alf_vocab_rec_t pv_alf_vocab_rec[PV_ALF_VOCAB_N_REC];
extern const pv_alf_vocab_room_t pv_alf_vocab_room[PV_ALF_VOCAB_N_ROOM];
/* GOALS_VALID: bit r = room r, indexed by ALFWorld task type 1..6 */
extern const uint8_t pv_alf_vocab_goal_rooms[7];
/* gen/goal_library.py templates per task type 1..6: {obj}, {recep}, {toggle} */
extern const char *const pv_alf_vocab_templates[7][2];

/* Index of a receptacle / object type by name, -1 when absent. */
int pv_alf_vocab_rec_index(const char *name);
int pv_alf_vocab_obj_index(const char *name);

#endif
