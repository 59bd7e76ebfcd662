/* searchqa.h - the "searchqa" environment family: Search-R1's search-and-answer protocol.
 *
 * Source: Jin et al., "Search-R1: Training LLMs to Reason and Leverage Search Engines with
 * Reinforcement Learning" (2025) and PeterGriffinJin/Search-R1: search_r1/llm_agent/
 * generation.py (execute_predictions, _passages2string) and verl/utils/reward_score/
 * qa_em.py (normalize_answer, em_check). Use it through env.h with spec.name = "searchqa".
 *
 * Episode: the first observation is "Question: <question>" (a text-writing policy gets
 * Search-R1's instruction prompt from pv_searchr1_prompt() instead). Actions:
 *   search[query]  or  a response with <search> query </search>  -> the top-k passages
 *       (spec.top_k, default 3) in Search-R1's observation, byte for byte:
 *       "\n\n<information>Doc 1(Title: \"Title\") text\nDoc 2(Title: ...) ...</information>\n\n"
 *       (pv_searchr1_information; no space before the parenthesis; the title keeps the
 *       corpus' quotes).
 *   answer[text]   or  a response with <answer> text </answer>    -> the episode ends with
 *       reward 1 when normalize_answer(text) equals normalize_answer(g) for a golden answer
 *       g (em_check), else 0; the observation is "" as in Search-R1.
 *   anything else -> Search-R1's "\nMy previous action is invalid. ...\n" text
 *       (pv_searchr1_invalid_obs), admissible = false; it still uses a turn.
 * The bracket forms (an action that starts with "search[" or "answer[") take the text from
 * the first '[' to the last ']'; any other text is a model response: cut as
 * pv_searchr1_cut() and parsed as pv_searchr1_parse() (first tag pair, stripped). Each
 * action is a turn; after max_steps turns (default 4) without an answer the episode ends
 * with reward 0. Answers are compared in full (golden answers are normalised at load
 * time, the prediction in an instance buffer); queries are cut at 2047 bytes.
 *
 * Atom traces (env.h, pv_env_trace_t; for VICT): the task has one goal atom, 0, "the
 * answer" (pv_env_atom_name: "answer(GOLD)"); a correct answer makes it, with an edge to
 * every search step (distinct, ascending) that first retrieved a passage whose
 * normalize_answer() text holds the normalised answer as whole words (a search that returns
 * a passage an earlier search returned retrieved nothing new for it). A search whose
 * normalised query is not in the normalised question (whole words) took it from a passage:
 * it has an edge to every search that first retrieved a passage holding the query (the
 * bridge of a multi-hop question: search[Glendale] depends on the search whose passage said
 * "born in Glendale"); a query in the question's own words has none. Beyond 8 edges the rest
 * are counted in n_dropped, once per search. Searches before the last pv_env_load give no
 * edge. Other steps have empty records.
 *
 * Admissible actions (candidates for a policy that scores actions; free text is accepted
 * too), at most PV_SEARCHQA_MAX_ACTIONS, queries first:
 *   queries  the question; the names in the question (runs of capitalised words and quoted
 *            phrases); the titles of the passages retrieved so far; names found in them;
 *   answers  yes / no when the question starts with an auxiliary verb, the titles of the
 *            retrieved passages, and names ("Bath, Maine" pairs and the parts of "A and B"
 *            included), numbers and dates ("2 March 1972", "March 26, 1986", "22 November")
 *            found in their text, most recent passage first.
 *   Names keep their initials ("M. Night Shyamalan": a capital letter and a full stop go on
 *   into a capitalised word that is no sentence word); a possessive ends a name and is cut
 *   ("Carr's" gives "Carr"), and so are curly quotes as straight ones; leading sentence words
 *   ("The", "Having", "Because", ...: a fixed list) are dropped from a name and from each
 *   part of an "and" span, and a month alone is no name. A date is offered in its longest
 *   form only ("20 March 1998", not "20 March"; the year is a number of its own), and a day
 *   next to a month word is no number ("20" of "20 March").
 * Candidates are recomputed from the state (question + retrieved passages), never stored.
 *
 * Retrieval: SQLite FTS5 BM25 over each passage's full "contents" (title line and text),
 * built once per model; see fts.h for the ranking parameters and the threading rule (each
 * instance has its own read-only connection). Search-R1 uses e5 dense retrieval or
 * Pyserini BM25; this is the BM25 variant.
 *
 * Data (spec.data_path):
 *   NULL / ""  an embedded generated multi-hop corpus (seeded by spec.seed): spec.gen_size
 *              people (default 60) with birth places and years, half as many companies and
 *              films, the cities and countries they refer to, and spec.gen_distractors
 *              extra people (default gen_size / 2) sharing surnames with them; one passage
 *              per entity. Each fact is written only in its subject's passage, so every
 *              question needs two searches by title (a search of the question's words can
 *              bring both passages; the admissible expert then needs one): "In which city was the
 * founder of X born?", "In what year was the director of X born?", "In which country is the
 *              headquarters of X located?", "Who founded the company that produced X?",
 *              "Which company was founded earlier, X or Y?".
 *   "DIR"      Search-R1's jsonl formats: DIR/<name containing "corpus">.jsonl (exactly one; lines
 * {"id", "contents": "\"Title\"\ntext"}) and DIR/<name containing "question">.jsonl (exactly one;
 * lines
 *              {"question", "golden_answers": [...], optional "id", optional
 *              "supporting_titles": [...] naming corpus titles without their quotes}).
 *   Malformed files give PV_ERR_DATA with "file:line: what is wrong" in the message, and so
 *   do fields of the wrong JSON type (a non-string question or contents, golden_answers
 *   that are neither a list of strings nor one string - em_check accepts a lone string -,
 *   supporting_titles that are not a list of strings, an id that is neither a string nor
 *   an integer). Too long for the wire, skipped and counted (pv_env_model_info; never
 *   fatal): a question over PV_ENV_TASK_TEXT_MAX bytes (it is the task text of every
 *   message about it) and a passage over PV_ENV_OBS_MAX / PV_SEARCHQA_MAX_TOP_K - 64 =
 *   65472 bytes (top_k of them make one observation). pv_env_model_info() summarises
 *   "searchqa: 1000 passages, 100 questions (80 train, 20 test) from DIR".
 *
 * Split: a question is in the test split when the FNV-1a 64 hash of its id (its text when
 * it has none) is 0 mod 5; task_id indexes the split's questions in file order.
 *
 * Expert: the shortest winning plan over the admissible candidates, so that its episodes
 * are demonstrations a candidate-scoring policy can clone. From the current state it
 * searches, by iterative deepening, for the fewest admissible searches (at most
 * SQ_PLAN_DEPTH = 3, and at most turns left - 1) after which an admissible answer wins;
 * candidates are tried in their listed order, so of the shortest plans it takes the first
 * in that order (deterministic). A search that retrieves no passage not already retrieved
 * is never part of a plan; a leaf is listed in full only when one of its passages alone
 * offers a winning answer (a necessary condition, see searchqa_expert.c). The plan is made
 * once and followed while the episode stays on it (same turn, same passages retrieved); off
 * it, and after load(), it is made again from there. Cost: at most SQ_PLAN_SEARCHES = 4096
 * FTS5 queries per plan (the budget; a search that exhausts it finds no plan), each
 * instance caching query results (2048 slots); on the HotpotQA sample (4 turns, top-k 3)
 * planning all 100 questions from their first state takes 1-2 s of one core, 0.13 s at
 * most per question (those without a plan cost most). Where no admissible plan exists the
 * expert falls back to the supporting-title expert: for each supporting passage not yet
 * retrieved, search its title (if that does not bring it into the top k, the title
 * followed by the question; if neither does, skip it), then answer the first golden
 * answer; with one turn left it answers at once; questions without supporting titles are
 * answered after searching the question once. Its queries and answer are often not
 * candidates, so behaviour cloning skips (and counts) those episodes
 * (pv_episodes_expert); on the sample 59 of 80 training and 15 of 20 test questions have
 * an admissible plan (4 / 1 answer at once, 37 / 13 after one search, 13 / 1 after two,
 * 5 / 0 after three; 58 and 14 before the name and date rules above, 2026-12-03).
 * pv_env_expert_plan_len() is the admissible plan's remaining length (searches + 1) when
 * there is one, else the title expert's, min(searches still needed, turns left - 1) + 1;
 * so the oracle judge reads progress along what the policy can do where that leads to a
 * win, and along the supporting passages where it cannot.
 *
 * Saved state (after env.c's header), little-endian: payload version, model fingerprint,
 * split, task_id, seed, question, turns, done/won, reward, what the last observation was,
 * size of the last search, retrieved passage ids in order. load() checks every field.
 * A search calls SQLite (which allocates internally); other steps allocate nothing.
 */
#ifndef PV_SEARCHQA_H
#define PV_SEARCHQA_H

#include <stdbool.h>
#include <stddef.h>

#include "common/env/text_util.h"

#define PV_SEARCHQA_TOP_K       3 /* Search-R1's default topk */
#define PV_SEARCHQA_MAX_TOP_K   16
#define PV_SEARCHQA_MAX_STEPS   4
#define PV_SEARCHQA_MAX_TURNS   64
#define PV_SEARCHQA_MAX_ACTIONS 64
#define PV_SEARCHQA_MAX_QUERIES 16  /* of the 64 candidates, at most this many queries */
#define PV_SEARCHQA_CAND_MAX    120 /* longest candidate text kept (bytes) */
#define PV_SEARCHQA_MAX_SUPPORT 4

/* ---- Text protocol (searchqa_text.c) ------------------------------------------------------
 * Search-R1's protocol for a policy that writes free text, from PeterGriffinJin/Search-R1:
 * search_r1/llm_agent/generation.py (commit 8b416d28: _postprocess_responses,
 * postprocess_predictions, execute_predictions, _passages2string),
 * scripts/data_process/nq_search.py (make_prefix, template "base") and
 * verl/utils/reward_score/qa_em.py (extract_solution, read from the forks
 * jyniki/Search-R1 7fb43ec and Xiaohao-trumpet/Search-R1-Fork 56bcf5e, which agree; the
 * upstream file is not in the index). A turn of the generation loop: the model's response
 * is cut with pv_searchr1_cut(), parsed with pv_searchr1_parse() (the environment's step
 * does both), and the observation appended to the context is the step's: the
 * pv_searchr1_information() block after a search, pv_searchr1_invalid_obs after anything
 * else, "" after an answer (which ends the episode). Search-R1 scores the whole decoded
 * sequence (prompt + responses + observations) with extract_solution(). */

typedef enum pv_searchr1_kind {
    PV_SEARCHR1_NONE = 0, /* no well-formed tag pair: an invalid action */
    PV_SEARCHR1_SEARCH = 1,
    PV_SEARCHR1_ANSWER = 2,
} pv_searchr1_kind_t;

/* The observation after an invalid action, newlines included, as execute_predictions
 * writes it. */
extern const char pv_searchr1_invalid_obs[];

/* make_prefix(question, 'base'): the instruction Search-R1 trains with, ending in
 * "For example, <answer> Beijing </answer>. Question: <question>\n". Appended to b. */
void pv_searchr1_prompt(pv_sbuf_t *b, const char *question);

/* _postprocess_responses: a response is cut after its first "</search>" when it has one,
 * else after its first "</answer>", else kept whole. Returns the kept length of
 * response[0..n). */
size_t pv_searchr1_cut(const char *response, size_t n);

/* postprocess_predictions: the first match of re.search(r'<(search|answer)>(.*?)</\1>',
 * text, re.DOTALL) in text[0..n) (leftmost opening tag that is closed later, nearest
 * closing tag of the same name); *arg, *len receive its content, str.strip()ped, pointing
 * into text. Returns PV_SEARCHR1_NONE (arg NULL) when there is none. */
pv_searchr1_kind_t pv_searchr1_parse(const char *text, size_t n, const char **arg, size_t *len);

/* qa_em.py extract_solution(solution_str): the non-overlapping matches of
 * r'<answer>(.*?)</answer>' (DOTALL) left to right; with 0 or 1 of them there is no
 * solution (false, *answer NULL), else *answer, *len receive the last one's content,
 * stripped, pointing into seq. Search-R1 passes the whole decoded sequence, whose prompt
 * already holds two matches ("inside <answer> and </answer>" and "<answer> Beijing
 * </answer>"), so a rollout that never answers extracts "Beijing". (The environment scores
 * the answer action itself: an episode without one ends with 0.) */
bool pv_searchr1_extract_solution(const char *seq, size_t n, const char **answer, size_t *len);

/* execute_predictions' observation after a search of n passages (their corpus "contents"
 * strings: title line, newline, text): "\n\n<information>" + _passages2string(...).strip()
 * + "</information>\n\n", where _passages2string writes "Doc {i}(Title: {title}) {text}\n"
 * per passage (1-based i, the title line as stored, quotes included). Appended to b. */
void pv_searchr1_information(pv_sbuf_t *b, const char *const *contents, size_t n);

#endif
