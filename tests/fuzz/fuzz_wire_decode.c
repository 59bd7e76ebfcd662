/* fuzz_wire_decode.c - libFuzzer target for the wire decoder (pv_wire_decode).
 *
 * Any byte string must give an error code or a message, never a crash, an over-read, a
 * leak or undefined behaviour (the target is built with ASan + UBSan). Whatever decodes
 * must also encode, decode again, and re-encode to the same bytes (the C encoder is
 * canonical), which checks that the decoder only accepts what the schema allows.
 * Built only with -DPV_FUZZ=ON and clang; tests/fuzz/run-fuzz seeds the corpus with valid
 * messages of every type and runs it for a time box.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* created once per fuzzing process and reused, as a long-running receiver would */
    static pv_wire_dec_t *dec;
    static pv_arena_t *arena;
    static pv_wire_buf_t first, second;
    if (!dec) {
        if (pv_wire_dec_new(NULL, &dec) != PV_OK || pv_arena_new(0, (size_t)512 << 20, &arena))
            abort();
        pv_wire_buf_init(&first, 0);
        pv_wire_buf_init(&second, 0);
    }
    pv_wire_msg_t msg, again;
    if (pv_wire_decode(dec, data, size, arena, &msg, NULL) == PV_OK) {
        if (pv_wire_encode(&msg, NULL, &first, NULL) != PV_OK)
            abort(); /* decoded but not encodable: decoder and encoder disagree */
        if (pv_wire_decode(dec, first.data, first.len, arena, &again, NULL) != PV_OK)
            abort();
        if (pv_wire_encode(&again, NULL, &second, NULL) != PV_OK || second.len != first.len ||
            memcmp(second.data, first.data, first.len) != 0)
            abort();
    } else if (msg.type != PV_MSG_NONE) {
        abort(); /* an error must leave an empty message */
    }
    pv_arena_reset(arena);
    return 0;
}
