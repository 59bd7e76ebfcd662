/* searchqa.h - the "searchqa" environment family: Search-R1's search-and-answer protocol.
 *
 * Source: Jin et al., "Search-R1: Training LLMs to Reason and Leverage Search Engines with
 * Reinforcement Learning" (2025) and PeterGriffinJin/Search-R1: search_r1/llm_agent/
 * generation.py (execute_predictions, _passages2string) and verl/utils/reward_score/
 * qa_em.py (normalize_answer, em_check). Use it through env.h with spec.name = "searchqa".
 *
 * Episode: the first observation is "Question: <question>". Actions:
 *   search[query]  or  <search> query </search>   -> the top-k passages (spec.top_k,
 *       default 3) as Search-R1 formats them, inside its information tags:
 *       "<information>Doc 1(Title: \"Title\") text\nDoc 2(Title: ...) ...</information>"
 *       (Search-R1 writes "Doc i(Title: ...)" with no space before the parenthesis; its
 *       surrounding blank lines are left out). The title keeps the corpus' quotes.
 *   answer[text]   or  <answer> text </answer>    -> the episode ends with reward 1 when
 *       normalize_answer(text) equals normalize_answer(g) for a golden answer g (em_check),
 *       else 0; the observation is "" as in Search-R1.
 *   anything else -> Search-R1's "My previous action is invalid. ..." text, admissible =
 *       false; it still uses a turn.
 * The bracket forms take the text from the first '[' to the last ']'; the tag forms the
 * first <search>...</search> or <answer>...</answer> pair, stripped. Each action is a turn;
 * after max_steps turns (default 4) without an answer the episode ends with reward 0.
 *
 * Admissible actions (candidates for a policy that scores actions; free text is accepted
 * too), at most PV_SEARCHQA_MAX_ACTIONS, queries first:
 *   queries  the question; the names in the question (runs of capitalised words and quoted
 *            phrases); the titles of the passages retrieved so far; names found in them;
 *   answers  yes / no when the question starts with an auxiliary verb, the titles of the
 *            retrieved passages, and names ("Bath, Maine" pairs and the parts of "A and B"
 *            included), numbers and dates ("2 March 1972", "March 26, 1986", "22 November")
 *            found in their text, most recent passage first.
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
 *              question needs two searches: "In which city was the founder of X born?",
 *              "In what year was the director of X born?", "In which country is the
 *              headquarters of X located?", "Who founded the company that produced X?",
 *              "Which company was founded earlier, X or Y?".
 *   "DIR"      Search-R1's jsonl formats: DIR/<name containing "corpus">.jsonl (exactly one; lines
 * {"id", "contents": "\"Title\"\ntext"}) and DIR/<name containing "question">.jsonl (exactly one;
 * lines
 *              {"question", "golden_answers": [...], optional "id", optional
 *              "supporting_titles": [...] naming corpus titles without their quotes}).
 *   Malformed files give PV_ERR_DATA with "file:line: what is wrong" in the message.
 *
 * Split: a question is in the test split when the FNV-1a 64 hash of its id (its text when
 * it has none) is 0 mod 5; task_id indexes the split's questions in file order.
 *
 * Expert: for each supporting passage not yet retrieved, search its title (if that does not
 * bring it into the top k, the title followed by the question; if neither does, skip it),
 * then answer the first golden answer. With one turn left it answers at once, so
 * pv_env_expert_plan_len() = min(searches still needed, turns left - 1) + 1 while the
 * episode runs. Questions without supporting titles are answered after searching the
 * question once.
 *
 * Saved state (after env.c's header), little-endian: payload version, model fingerprint,
 * split, task_id, seed, question, turns, done/won, reward, what the last observation was,
 * size of the last search, retrieved passage ids in order. load() checks every field.
 * A search calls SQLite (which allocates internally); other steps allocate nothing.
 */
#ifndef PV_SEARCHQA_H
#define PV_SEARCHQA_H

#define PV_SEARCHQA_TOP_K       3 /* Search-R1's default topk */
#define PV_SEARCHQA_MAX_TOP_K   16
#define PV_SEARCHQA_MAX_STEPS   4
#define PV_SEARCHQA_MAX_TURNS   64
#define PV_SEARCHQA_MAX_ACTIONS 64
#define PV_SEARCHQA_MAX_QUERIES 16  /* of the 64 candidates, at most this many queries */
#define PV_SEARCHQA_CAND_MAX    120 /* longest candidate text kept (bytes) */
#define PV_SEARCHQA_MAX_SUPPORT 4

#endif
