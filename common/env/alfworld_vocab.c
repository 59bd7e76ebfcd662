/* alfworld_vocab.c - ALFRED vocabulary tables; provenance in alfworld_vocab.h. */
#include <string.h>

#include "common/env/alfworld_vocab.h"

/* object types (pickupable), index = bit in the masks below */
const char *const pv_alf_vocab_obj[PV_ALF_VOCAB_N_OBJ] = {
    "AlarmClock",  "Apple",           "BaseballBat",   "BasketBall", "Book",         "Bowl",
    "Box",         "Bread",           "ButterKnife",   "CD",         "Candle",       "CellPhone",
    "Cloth",       "CreditCard",      "Cup",           "DishSponge", "Egg",          "Fork",
    "Glassbottle", "HandTowel",       "Kettle",        "KeyChain",   "Knife",        "Ladle",
    "Laptop",      "Lettuce",         "Mug",           "Newspaper",  "Pan",          "PaperTowel",
    "Pen",         "Pencil",          "PepperShaker",  "Pillow",     "Plate",        "Plunger",
    "Pot",         "Potato",          "RemoteControl", "SaltShaker", "SoapBar",      "SoapBottle",
    "Spatula",     "Spoon",           "SprayBottle",   "Statue",     "TennisRacket", "TissueBox",
    "ToiletPaper", "ToiletPaperRoll", "Tomato",        "Towel",      "Vase",         "Watch",
    "WateringCan", "WineBottle",
};
const uint64_t pv_alf_vocab_heatable = 0x0004002404014082ull;
const uint64_t pv_alf_vocab_coolable = 0x00840034160140a2ull;
const uint64_t pv_alf_vocab_cleanable = 0x00040d3416d3d122ull;
const uint64_t pv_alf_vocab_sliceable = 0x0004002002010082ull;
const uint64_t pv_alf_vocab_recobj =
    0x0000001414004060ull; /* MOVABLE_RECEPTACLES: isReceptacleObject */

const pv_alf_vocab_rec_t pv_alf_vocab_rec[PV_ALF_VOCAB_N_REC] = {
    {"ArmChair", 0, 0x0000004209203858ull},
    {"BathtubBasin", 0, 0x0000010000089000ull},
    {"Bed", 0, 0x000040020900081cull},
    {"Cabinet", 1, 0x00d3939d1c9cd670ull},
    {"Cart", 0, 0x0013b30824089400ull},
    {"CoffeeMachine", 0, 0x0000000004000000ull},
    {"CoffeeTable", 0, 0x00f7fff5ffffffffull},
    {"CounterTop", 0, 0x00f7fff5ffffffffull},
    {"Desk", 0, 0x00f3f244cd247e79ull},
    {"DiningTable", 0, 0x00f7fff5ffffffffull},
    {"Drawer", 1, 0x00639fc1c8eabf10ull},
    {"Dresser", 0, 0x00f3f044cd247e79ull},
    {"Fridge", 1, 0x00840034160540a2ull},
    {"GarbageCan", 0, 0x00879320ea099282ull},
    {"HandTowelHolder", 0, 0x0000000000080000ull},
    {"LaundryHamper", 0, 0x0000000000001000ull},
    {"Microwave", 1, 0x00040024040540a2ull},
    {"Ottoman", 0, 0x0000004209203858ull},
    {"Safe", 1, 0x0030200000202a00ull},
    {"Shelf", 0, 0x00f3b3d5ec3cfe71ull},
    {"SideTable", 0, 0x00f7fff5ffffffffull},
    {"SinkBasin", 0, 0x00040d3416dfd122ull},
    {"Sofa", 0, 0x0000004209203858ull},
    {"StoveBurner", 0, 0x0000001010100000ull},
    {"TVStand", 0, 0x0000800000000000ull},
    {"Toaster", 0, 0x0000000000000000ull},
    {"Toilet", 0, 0x0003930028089400ull},
    {"ToiletPaperHanger", 0, 0x0003000000000000ull},
    {"TowelHolder", 0, 0x0008000000000000ull},
};

/* Rooms (ours). Receptacle indices refer to pv_alf_vocab_rec above. */
#define R(name) PV_ALF_R_##name
enum {
    R(ArmChair),
    R(BathtubBasin),
    R(Bed),
    R(Cabinet),
    R(Cart),
    R(CoffeeMachine),
    R(CoffeeTable),
    R(CounterTop),
    R(Desk),
    R(DiningTable),
    R(Drawer),
    R(Dresser),
    R(Fridge),
    R(GarbageCan),
    R(HandTowelHolder),
    R(LaundryHamper),
    R(Microwave),
    R(Ottoman),
    R(Safe),
    R(Shelf),
    R(SideTable),
    R(SinkBasin),
    R(Sofa),
    R(StoveBurner),
    R(TVStand),
    R(Toaster),
    R(Toilet),
    R(ToiletPaperHanger),
    R(TowelHolder),
};

const pv_alf_vocab_room_t pv_alf_vocab_room[PV_ALF_VOCAB_N_ROOM] = {
    {"Kitchen",
     12,
     28,
     13,
     {{R(Cabinet), 8, 20},
      {R(Drawer), 5, 12},
      {R(CounterTop), 2, 3},
      {R(StoveBurner), 3, 4},
      {R(Shelf), 1, 3},
      {R(SinkBasin), 1, 1},
      {R(Fridge), 1, 1},
      {R(Microwave), 1, 1},
      {R(CoffeeMachine), 1, 1},
      {R(Toaster), 1, 1},
      {R(GarbageCan), 1, 1},
      {R(DiningTable), 1, 2},
      {R(SideTable), 1, 1}}},
    {"LivingRoom",
     8,
     20,
     13,
     {{R(Sofa), 1, 2},
      {R(ArmChair), 1, 2},
      {R(CoffeeTable), 1, 2},
      {R(SideTable), 2, 3},
      {R(TVStand), 1, 1},
      {R(Drawer), 3, 6},
      {R(Cabinet), 2, 4},
      {R(Shelf), 3, 8},
      {R(GarbageCan), 1, 1},
      {R(DiningTable), 1, 1},
      {R(Ottoman), 1, 1},
      {R(Safe), 1, 1},
      {R(Dresser), 1, 1}}},
    {"Bedroom",
     8,
     20,
     11,
     {{R(Bed), 1, 1},
      {R(Desk), 1, 2},
      {R(Drawer), 4, 10},
      {R(Dresser), 1, 1},
      {R(SideTable), 2, 2},
      {R(Shelf), 3, 6},
      {R(GarbageCan), 1, 1},
      {R(LaundryHamper), 1, 1},
      {R(ArmChair), 1, 2},
      {R(Safe), 1, 1},
      {R(Cabinet), 1, 4}}},
    {"Bathroom",
     8,
     18,
     13,
     {{R(Cabinet), 4, 6},
      {R(Drawer), 2, 6},
      {R(CounterTop), 1, 1},
      {R(SinkBasin), 1, 2},
      {R(BathtubBasin), 1, 1},
      {R(Toilet), 1, 1},
      {R(ToiletPaperHanger), 1, 1},
      {R(TowelHolder), 1, 2},
      {R(HandTowelHolder), 1, 2},
      {R(GarbageCan), 1, 1},
      {R(Shelf), 1, 3},
      {R(Cart), 1, 1},
      {R(Dresser), 1, 1}}},
};
#undef R

/* GOALS_VALID; rooms: bit 0 Kitchen, 1 LivingRoom, 2 Bedroom, 3 Bathroom */
const uint8_t pv_alf_vocab_goal_rooms[7] = {
    0,   0xf, /* 1 pick_and_place_simple: Bathroom, Bedroom, Kitchen, LivingRoom */
    0x6,      /* 2 look_at_obj_in_light: Bedroom, LivingRoom */
    0x9,      /* 3 pick_clean_then_place_in_recep: Bathroom, Kitchen */
    0x1,      /* 4 pick_heat_then_place_in_recep: Kitchen */
    0x1,      /* 5 pick_cool_then_place_in_recep: Kitchen */
    0xf,      /* 6 pick_two_obj_and_place: all four */
};

const char *const pv_alf_vocab_templates[7][2] = {
    {"", ""},
    {"put a {obj} in {recep}", "put some {obj} on {recep}"},
    {"look at {obj} under the {toggle}", "examine the {obj} with the {toggle}"},
    {"put a clean {obj} in {recep}", "clean some {obj} and put it in {recep}"},
    {"put a hot {obj} in {recep}", "heat some {obj} and put it in {recep}"},
    {"put a cool {obj} in {recep}", "cool some {obj} and put it in {recep}"},
    {"put two {obj} in {recep}", "find two {obj} and put them in {recep}"},
};

int pv_alf_vocab_rec_index(const char *name)
{
    for (int i = 0; i < PV_ALF_VOCAB_N_REC; i++)
        if (strcmp(pv_alf_vocab_rec[i].name, name) == 0)
            return i;
    return -1;
}

int pv_alf_vocab_obj_index(const char *name)
{
    for (int i = 0; i < PV_ALF_VOCAB_N_OBJ; i++)
        if (strcmp(pv_alf_vocab_obj[i], name) == 0)
            return i;
    return -1;
}
