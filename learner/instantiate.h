/* instantiate.h - compile a type-generic template twice: for double with the suffix _f64
 * and for float with _f32. Define PV_TMPL as the template's include path first; the
 * template uses T for the floating type and PV_SFX(name) for suffixed names. No guard:
 * included once per template. */
#define T         double
#define PV_SFX(n) n##_f64
#include PV_TMPL
#undef T
#undef PV_SFX

#define T         float
#define PV_SFX(n) n##_f32
#include PV_TMPL
#undef T
#undef PV_SFX
#undef PV_TMPL
