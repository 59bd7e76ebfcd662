/* test_alfworld_parse.c - the readers and the grounding rules they follow, on small texts:
 * Fast Downward's tokeniser and typed lists, its operator simplifications (add beats delete, an
 * operator that changes nothing is dropped, disjunctions split, forall expanded), TextWorld's
 * grammar syntax (rule merging, the parser stopping at text it cannot read), query matching,
 * ALFWorld's name demangling, and error messages that name the text, the line and the fault. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/env/alfworld_int.h"

static pv_arena_t *s_arena;

static int s_setup(void **state)
{
    (void)state;
    return pv_arena_new(1 << 16, 0, &s_arena) == PV_OK ? 0 : -1;
}

static int s_teardown(void **state)
{
    (void)state;
    pv_arena_destroy(&s_arena);
    return 0;
}

/* ---------------------------------------------------------------- s-expressions, PDDL */

static void test_tokens_like_fast_downward(void **state)
{
    (void)state;
    pv_alf_sx_t *x = NULL;
    pv_errmsg_t em;
    assert_int_equal(pv_alf_sx_parse(s_arena, "(Foo ?A?b ; comment (\n Bar)", "t", &x, &em), PV_OK);
    assert_int_equal(x->n, 1);
    const pv_alf_sx_t *l = x->kids[0];
    assert_int_equal(l->n, 4);
    assert_string_equal(l->kids[0]->atom, "foo"); /* lowercased */
    assert_string_equal(l->kids[1]->atom, "?a");  /* '?' starts a token */
    assert_string_equal(l->kids[2]->atom, "?b");
    assert_string_equal(l->kids[3]->atom, "bar");
    assert_int_equal(l->kids[3]->line, 2);
    assert_int_equal(pv_alf_sx_parse(s_arena, "(a\n(b)", "t.pddl", &x, &em), PV_ERR_PARSE);
    assert_string_equal(em.text, "t.pddl:2: missing ')' for the '(' opened on line 1");
    assert_int_equal(pv_alf_sx_parse(s_arena, "(a))", "t", &x, &em), PV_ERR_PARSE);
    assert_string_equal(em.text, "t:1: unexpected ')'");
    assert_int_equal(pv_alf_sx_parse(s_arena, "(caf\xc3\xa9)", "t", &x, &em), PV_ERR_PARSE);
    assert_true(strstr(em.text, "non-ASCII") != NULL);
}

static const char *s_dom =
    "(define (domain d) (:requirements :typing)\n"
    " (:types thing place - object)\n"
    " (:predicates (at ?t - thing ?p - place) (lit ?p - place) (big ?t - thing)\n"
    "              (held ?t - thing) (mark ?t - thing) (open ?p - place))\n"
    " (:action move :parameters (?t - thing ?from ?to - place)\n"
    "   :precondition (and (at ?t ?from))\n"
    "   :effect (and (not (at ?t ?from)) (at ?t ?to)))\n"
    " (:action touch :parameters (?t - thing)\n"
    "   :precondition (or (big ?t) (held ?t))\n"
    "   :effect (and (not (mark ?t)) (mark ?t)))\n"
    " (:action shut :parameters (?p - place)\n"
    "   :precondition (forall (?q - place) (not (open ?q)))\n"
    "   :effect (open ?p))\n"
    " (:action pick :parameters (?t - thing ?p - place)\n"
    "   :precondition (at ?t ?p) :effect (held ?t))\n"
    " (:action grab :parameters (?t - thing)\n"
    "   :precondition (exists (?p - place, ?z - place) (at ?t ?p))\n"
    "   :effect (held ?t)))\n";

static const char *s_gram =
    "# comment\n"
    "grammar :: \"\"\"{ \"intro\": [{\"rhs\": \"hi #x#\"}], \"x\": [{\"rhs\": \"one\"}],\n"
    "  \"ov\": [{\"rhs\": \"{t.indefinite} {t.name} (in {p.name})}\"}],\n"
    "  \"list_empty\": [{\"rhs\": \"nothing\"}], \"list_separator\": [{\"rhs\": \", \"}],\n"
    "  \"list_last_separator\": [{\"rhs\": \", and \"}],\n"
    "  \"here\": [{\"rhs\": \"[{t.name | at(t:thing, p:place)}]\"}],\n"
    "  \"pair\": [{\"rhs\": \"[{t.name + '/' + u.name | at(t:thing, p:place) & at(u:thing, "
    "p:place)}]\"}] }\"\"\";\n"
    "action move { template :: \"move {t} to {to}\"; feedback :: \"#x#\"; }\n"
    "action touch { template :: \"touch {t}\"; feedback :: \"#x#\";\n"
    "  grammar :: \"\"\"{\n# a comment line\n \"x\": [{\"rhs\": \"two\"}] }\"\"\"; }\n"
    "action shut { template :: \"shut {p}\"; feedback :: \"#x#\"; }\n"
    "action grab { template :: \"grab {t}\"; feedback :: \"#x#\"; }\n"
    "action pick { template :: \"pick {t}\"; feedback :: \"#x#\"; }\n";

static const char *s_prob = "(define (problem p) (:domain d)\n"
                            " (:objects Ball_bar_x Cup_bar_y Cup_bar_z - thing\n"
                            "           Sink_bar_1_bar_SinkBasin Room - place)\n"
                            " (:init (at Ball_bar_x Room) (at Cup_bar_y Room) (big Cup_bar_z)\n"
                            "        (at Cup_bar_z Sink_bar_1_bar_SinkBasin))\n"
                            " (:goal (exists (?t - thing) (and (held ?t) (mark ?t)))))\n";

static pv_alf_game_t *s_game(void)
{
    pv_errmsg_t em = {{0}};
    pv_alf_domain_t *d;
    pv_alf_grammar_t *g;
    pv_alf_problem_t *p;
    pv_alf_game_t *game;
    if (pv_alf_domain_parse(s_arena, s_dom, "dom", &d, &em) != PV_OK ||
        pv_alf_grammar_parse(s_arena, d, s_gram, "gram", &g, &em) != PV_OK ||
        pv_alf_problem_parse(s_arena, d, s_prob, "prob", &p, &em) != PV_OK ||
        pv_alf_ground(NULL, s_arena, d, g, p, NULL, "game", &game, &em) != PV_OK)
        fail_msg("%s", em.text);
    return game;
}

static int32_t s_cmd(const pv_alf_game_t *g, const char *text)
{
    for (uint32_t i = 0; i < g->n_cmds; i++)
        if (strcmp(g->cmd[i], text) == 0)
            return (int32_t)i;
    return -1;
}

static uint32_t s_ops_of(const pv_alf_game_t *g, const char *text)
{
    int32_t c = s_cmd(g, text);
    return c < 0 ? 0 : g->cmd_ops_off[c + 1] - g->cmd_ops_off[c];
}

/* FD's translator: a move to the place the thing is at changes nothing and is dropped (so
 * only one "move ... to room", from the sink basin); "touch" (delete and add of mark) keeps the
 * add; its or splits into one operator per disjunct that can hold; forall expands over the
 * places; a quantified variable of the undeclared type "place," has no objects, so "grab"
 * never applies. */
static void test_grounding_rules(void **state)
{
    (void)state;
    pv_alf_game_t *g = s_game();
    assert_int_equal(s_ops_of(g, "move ball 1 to room"), 1); /* from the sink basin only */
    assert_int_equal(s_ops_of(g, "move ball 1 to sinkbasin 1"), 1);
    assert_int_equal(s_ops_of(g, "pick ball 1"), 2);  /* at either place */
    assert_int_equal(s_ops_of(g, "touch cup 1"), 2);  /* (big) or (held): two disjuncts */
    assert_int_equal(s_ops_of(g, "touch ball 1"), 1); /* not big: only via held */
    assert_true(s_cmd(g, "grab ball 1") < 0);
    int32_t c = s_cmd(g, "shut room");
    assert_true(c >= 0);
    const pv_alf_op_t *op = &g->ops[g->cmd_ops[g->cmd_ops_off[c]]];
    assert_int_equal(op->n_pre, 2); /* (not (open q)) for both places */
    for (uint16_t i = 0; i < op->n_pre; i++)
        assert_int_equal(g->lits[op->pre + i].val, 0);
    /* touch: the add survives the delete */
    c = s_cmd(g, "touch cup 1");
    op = &g->ops[g->cmd_ops[g->cmd_ops_off[c]]];
    assert_int_equal(op->n_eff, 1);
    assert_int_equal(g->effs[op->eff].val, 1);
    /* the goal: something held and marked */
    assert_false(pv_alf_goal_holds(g, g->init_bits));
}

/* ALFWorld's Demangler: names from ids with "_bar_", numbered per name over the sorted ids
 * counting down; "basin" in an id extends the name. */
static void test_demangled_names(void **state)
{
    (void)state;
    pv_alf_game_t *g = s_game();
    const char *want[][2] = {{"ball_bar_x", "ball 1"},
                             {"cup_bar_y", "cup 2"}, /* "cup_bar_y" < "cup_bar_z": counts down */
                             {"cup_bar_z", "cup 1"},
                             {"sink_bar_1_bar_sinkbasin", "sinkbasin 1"},
                             {"room", "room"}};
    for (int i = 0; i < 5; i++) {
        bool found = false;
        for (uint32_t e = 0; e < g->n_ent; e++)
            if (strcmp(g->prob->ent_id[e], want[i][0]) == 0) {
                assert_string_equal(g->ent_name[e], want[i][1]);
                found = true;
            }
        assert_true(found);
    }
}

/* TextWorld's grammar: later blocks replace rules of the same name (touch's "x" wins), lines of
 * an action's block starting with '#' are comments, the right-hand side parser stops at a
 * character it cannot read (the stray '}'), and queries bind new placeholders to objects no
 * other binding holds ("pair" never pairs a thing with itself). */
static void test_grammar_semantics(void **state)
{
    (void)state;
    pv_alf_game_t *g = s_game();
    uint64_t neg[4] = {0};
    pv_alf_view_t view = {g, g->init_bits, neg};
    char buf[512];
    pv_alf_out_t out = {.buf = buf, .cap = sizeof buf};
    pv_alf_intro(&view, &out);
    assert_string_equal(buf, "hi two");
    const pv_alf_grammar_t *gm = g->gram;
    int32_t ov = -1, here = -1, pair = -1;
    for (uint32_t i = 0; i < gm->n_rules; i++) {
        ov = strcmp(gm->rules[i].name, "ov") == 0 ? (int32_t)i : ov;
        here = strcmp(gm->rules[i].name, "here") == 0 ? (int32_t)i : here;
        pair = strcmp(gm->rules[i].name, "pair") == 0 ? (int32_t)i : pair;
    }
    assert_true(ov >= 0 && here >= 0 && pair >= 0);
    const pv_alf_alt_t *alt = &gm->rules[ov].alts[0];
    assert_int_equal(alt->n_syms, 6);
    assert_string_equal(alt->syms[5].text, ")");
    pv_alf_ctx_t ctx = {.n = 0};
    out.len = 0;
    buf[0] = 0;
    pv_alf_derive_rule(&view, here, &ctx, &out);
    assert_string_equal(buf, "ball 1, cup 2, and cup 1");
    out.len = 0;
    buf[0] = 0;
    pv_alf_derive_rule(&view, pair, &ctx, &out);
    assert_string_equal(buf, "ball 1/cup 2, and cup 2/ball 1");
}

/* ---------------------------------------------------------------- errors */

static void s_expect_domain_error(const char *text, pv_err_t want, const char *msg)
{
    pv_alf_domain_t *d;
    pv_errmsg_t em = {{0}};
    pv_err_t rc = pv_alf_domain_parse(s_arena, text, "bad.pddl", &d, &em);
    if (rc != want || strcmp(em.text, msg) != 0)
        fail_msg("got %s '%s', want %s '%s'", pv_errname(rc), em.text, pv_errname(want), msg);
}

static void test_domain_errors(void **state)
{
    (void)state;
    s_expect_domain_error("(define (domain d)\n (:predicates (p ?x))\n (:action a :parameters (?x)"
                          "\n  :precondition (p ?y) :effect (p ?x)))",
                          PV_ERR_DATA, "bad.pddl:4: undefined variable '?y'");
    s_expect_domain_error("(define (domain d)\n (:predicates (p ?x))\n (:action a :parameters (?x)"
                          "\n  :precondition (p ?x ?x) :effect (p ?x)))",
                          PV_ERR_DATA, "bad.pddl:4: predicate 'p' takes 1 arguments, 2 given");
    s_expect_domain_error("(define (domain d)\n (:predicates (p ?x))\n (:action a :parameters (?x)"
                          "\n  :precondition (q ?x) :effect (p ?x)))",
                          PV_ERR_DATA, "bad.pddl:4: undefined predicate 'q'");
    s_expect_domain_error("(define (domain d)\n (:predicates (p ?x))\n (:action a :parameters (?x)"
                          "\n  :precondition (p ?x)))",
                          PV_ERR_DATA, "bad.pddl:3: action 'a' has no :effect");
    s_expect_domain_error("(define (domain d)\n (:predicates (p ?x))\n (:derived (p ?x) (p ?x)))",
                          PV_ERR_UNSUPPORTED, "bad.pddl:3: derived predicates are not supported");
    s_expect_domain_error("(define (domain d))", PV_ERR_DATA,
                          "bad.pddl: the domain has no (:predicates ...)");
    s_expect_domain_error("(define (problem d))", PV_ERR_PARSE,
                          "bad.pddl:1: expected (domain NAME)");
    pv_alf_domain_t *d;
    pv_errmsg_t em;
    assert_int_equal(pv_alf_domain_parse(s_arena, s_dom, "dom", &d, &em), PV_OK);
    pv_alf_problem_t *p;
    assert_int_equal(pv_alf_problem_parse(s_arena, d,
                                          "(define (problem p) (:objects a a - thing) (:init) "
                                          "(:goal (and)))",
                                          "bad.pddl", &p, &em),
                     PV_ERR_DATA);
    assert_string_equal(em.text, "bad.pddl:1: duplicate object 'a'");
    pv_alf_grammar_t *g;
    assert_int_equal(pv_alf_grammar_parse(s_arena, d,
                                          "grammar :: \"\"\"{\"intro\": [{\"rhs\": \"#nope#\"}]}"
                                          "\"\"\";",
                                          "bad.twl2", &g, &em),
                     PV_ERR_DATA);
    assert_string_equal(em.text, "bad.twl2: intro uses unknown grammar symbol '#nope#'");
    assert_int_equal(
        pv_alf_grammar_parse(s_arena, d, "action a { template :: \"x\"; }\n@", "bad.twl2", &g, &em),
        PV_ERR_PARSE);
    assert_string_equal(em.text, "bad.twl2:2: unexpected character '@'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens_like_fast_downward),
        cmocka_unit_test(test_grounding_rules),
        cmocka_unit_test(test_demangled_names),
        cmocka_unit_test(test_grammar_semantics),
        cmocka_unit_test(test_domain_errors),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
