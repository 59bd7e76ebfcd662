/* webshop.h - the "webshop" environment family: WebShop's text mode in C.
 *
 * Source: Yao et al., "WebShop: Towards Scalable Real-World Web Interaction with Grounded
 * Language Agents" (NeurIPS 2022) and princeton-nlp/WebShop: web_agent_site/envs/
 * web_agent_text_env.py (text mode, observation_mode='text'), engine/engine.py (pages,
 * search, product loading), engine/goal.py (goals and reward), engine/normalize.py, and
 * the page templates (search/results/item/description/features/review pages).
 *
 * Use it through env.h with spec.name = "webshop".
 *
 * Pages and observations (visible page texts joined with " [SEP] ", as WebShop's
 * convert_html_to_text(simple=True)):
 *   search   "WebShop [SEP] Instruction: [SEP] <instruction> [SEP] Search"
 *   results  "Instruction: [SEP] <instr> [SEP] Back to Search [SEP] Page 1 (Total results: 50)
 *             [SEP] Next > [SEP] B0... [SEP] <Title> [SEP] $9.99 [SEP] ..."  (10 a page, at
 *             most 50 results; "< Prev" appears from page 2; "Next >" is always shown, as in
 *             WebShop, and leads to an empty page past the last result)
 *   item     "... Back to Search [SEP] < Prev [SEP] <option name> [SEP] <value> ... [SEP]
 *             <Title> [SEP] Price: <Price> [SEP] Rating: <Rating> [SEP] Description [SEP]
 *             Features [SEP] Reviews [SEP] Buy Now"
 *   description / features / reviews: "... Back to Search [SEP] < Prev [SEP] <text>..."
 *   done     "Thank you for shopping with us! [SEP] Your score (min 0.0, max 1.0) [SEP] <r>"
 *            (WebShop's done page also prints the hidden goal; we do not).
 * Actions: "search[keywords]" (accepted on every page, as WebShop's text env does) and
 * "click[button]" where button is one of the page's clickables, lower-cased as WebShop
 * lower-cases them: "back to search", "< prev", "next >", a result's ASIN ("b09qqp3356"),
 * an option value, "description", "features", "reviews", "buy now". Anything else changes
 * nothing (same observation, admissible = false) and still counts as a step. The argument
 * is lower-cased; it runs from the first '[' to the last ']' (WebShop's regex differs only
 * for arguments holding brackets); outer white space is ignored. Search keywords are cut at
 * PV_WEBSHOP_QUERY_MAX bytes. Going back to search or to the results page clears the
 * selected options, as in WebShop's session. When an option value appears under two option
 * names, clicking it selects the last one (WebShop's text_to_clickable dict). Episodes end
 * on "buy now" or after max_steps (default 15) with reward 0.
 *
 * Admissible actions (pv_env_admissible): the page's clicks in WebShop's order (buttons,
 * result links, then option values), at most PV_WEBSHOP_MAX_ACTIONS; on the search page up
 * to five search[...] candidates, what a shopper would type: the instruction's own words
 * (no options, no price), the instruction without its price clause, its content words, the
 * content words with the goal's attribute phrases, and with its option values (duplicates
 * dropped; webshop_env.h ws_search_queries).
 *
 * Reward on "buy now": WebShop's main-branch get_reward (engine/goal.py), see
 * pv_webshop_score() for each term:
 *   r = (matched attributes + matched options + [price <= price_upper]) / (|A| + |O| + 1)
 *       * r_type
 * for goal attributes A and goal options O. won = (r >= 1). Buying the goal product with
 * exactly the goal options does not always score 1: main compares the purchased values with
 * the synthetic goal's (name, value) pairs after colour-normalising only the purchased side,
 * and we do the same (on the real 1,000-product catalogue 458 of the 6,910 synthetic goals
 * miss an option that way). Differences from the Python:
 *   - r_type's noun tagging: WebShop tags product names with spaCy en_core_web_sm (main
 *     branch; an earlier variant used en_core_web_lg) and keeps NOUN/PROPN tokens; spaCy is
 *     not in Debian, so we approximate: split names like spaCy's tokenizer (white space,
 *     punctuation, hyphens between letters, possessive 's) and keep tokens with a letter and
 *     no digit that are not function words, not in a short list of participles ("listed",
 *     "made", ...), and, when written in lower case, not in a short list of common
 *     adjectives. Title-case product names make spaCy tag most words PROPN, which this
 *     matches. It reproduces the four title scores of WebShop's own tests
 *     (tests/web-agent-site/engine/test_goal.py: 0.85, 0.31, 0.17, < 0.05), and a product's
 *     own name scores 1 (so r_type = 1 when buying the goal product); for other products
 *     r_type may differ from spaCy's when a tagging decision flips one of the 0.1 / 0.2
 *     thresholds. Everything else in the reward is checked against a Python transcription
 *     of main's goal.py running thefuzz 0.19.0 on the real catalogue
 *     (tests/common/env/webshop_reward_oracle.py).
 *   - fuzzy matching is thefuzz 0.19.0 token_set_ratio > 85 with difflib's matcher
 *     (pv_text_token_set_ratio); text is lower-cased as str.lower() (libunistring).
 *   - a product with a price range gets a price drawn uniformly in the range, as WebShop's
 *     generate_product_prices, but from a hash of (model seed, ASIN) instead of Python's
 *     unseeded random, so every host agrees; price_upper is drawn like get_synthetic_goals
 *     (the larger of two distinct picks among the first four multiples of 10 above the
 *     price; no limit and no price text when fewer than two exist) from (seed, goal index).
 *
 * Data (spec.data_path):
 *   NULL / ""      an embedded generated catalogue: spec.gen_size goal products (default
 *                  100) plus spec.gen_distractors near-duplicate products without goals
 *                  (default 100) over 25 product types of WebShop's five categories, with
 *                  goals of every option combination (WebShop's synthetic-goal rule),
 *                  seeded by spec.seed.
 *   "DIR"          real WebShop data: the product file DIR/products*.jsonl (exactly one:
 *                  one product per line, {"id", "contents", "product": {...}} as Pyserini's
 *                  WebShop index stores it, or the bare product object; the product holds
 *                  asin, name, Title, Description, BulletPoints, Attributes, options,
 *                  pricing, Price, Rating, query, product_category, optional Reviews and
 *                  instructions, i.e. WebShop's engine.load_products() output) and the goal
 *                  file DIR/items_ins_v2*.json (exactly one; {asin: {attributes,
 *                  instruction?, instruction_attributes?}}). Goals are WebShop's synthetic
 *                  goals (get_synthetic_goals): for each product in file order that has an
 *                  instruction, one goal per combination of its option values (option names
 *                  sorted), instruction "<instruction> with <name>: <value>, and ..." plus
 *                  ", and price lower than <p> dollars".
 *   "DIR#human"    the same catalogue with WebShop's human goals (get_human_goals): the
 *                  products' "instructions" lists (items_human_ins.json merged by
 *                  load_products), goal options = instruction_options. DIR/human_goals.json
 *                  (a list of instruction texts), when present, orders them as WebShop's
 *                  baseline does and decides the split.
 *   Malformed files give PV_ERR_DATA with "file:line: what is wrong" in the message, and so
 *   do fields of the wrong JSON type: a number where a name, title, description or category
 *   string belongs (only Rating, Price and review scores may be numbers), a string where a
 *   list belongs (Attributes, option values, instruction_attributes/options; BulletPoints
 *   alone may be one string, as load_products wraps small_description).
 *   Too long for the wire, skipped and counted (pv_env_model_info; never fatal): a goal
 *   whose instruction exceeds PV_ENV_TASK_TEXT_MAX, and a product whose pages could exceed
 *   PV_ENV_OBS_MAX with an instruction or whose option click could exceed PV_ENV_ACTION_MAX
 *   (it is left out of the search index, so no page shows it, and has no goals).
 *   pv_env_model_info() summarises "webshop: 1000 products, 6910 synthetic goals of 415
 *   products (6607 train, 303 test) from DIR".
 *
 * Splits (deterministic, documented for reproducibility):
 *   synthetic and generated goals: a goal is in the test split when the FNV-1a 64 hash of
 *   its product's ASIN is 0 mod 10, so test products are never targets of training goals
 *   (on the real 1,000-product file: 55 products, 303 test goals of 6,910);
 *   human goals: test when the instruction's index in human_goals.json is below 500
 *   (WebShop's baseline test range), otherwise train; goals whose text is not in the list,
 *   or all goals when the file is absent, split by the hash rule.
 *   task_id indexes the split's goals in order; n_tasks is finite.
 *
 * Expert: searches with the first admissible search candidate whose 50 results hold the goal
 * product (none does for 2 of the 568 goals the real-catalogue test plays: no plan,
 * PV_ERR_NOTFOUND); pages to it, opens it, clicks every goal option and buys. From any
 * other page it goes back ("< Prev" or "Back to Search") by the shortest route. Every
 * action it takes is admissible, so its episodes are demonstrations for behaviour cloning.
 *
 * Threading: the model (catalogue, goals, FTS5 index) is read-only and shared; each
 * instance owns its own read-only SQLite connection (see fts.h). A step that searches
 * calls SQLite, which allocates internally; every other step allocates nothing.
 *
 * Atom traces (env.h, pv_env_trace_t; for VICT; webshop_trace.c): the goal atoms are the
 * terms of the reward below, each its own atom - 0 the purchase ("purchase(INSTRUCTION)"),
 * 1 the type match r_type = 1 ("type(GOAL NAME)"), 2 the price bound ("price(<= 40.00)"),
 * then one per goal attribute ("attribute(...)", 3 + a) and one per goal option
 * ("option(name: value)" or "option(value)", 3 + n_attributes + k). An atom holds when the
 * open product and the options selected on it satisfy its term as pv_webshop_score would
 * score a purchase now (attributes, type and price of the product; an option when some
 * selected value matches it); none holds without an open product or once the episode ended
 * without a purchase. Makers: the click that opens a product makes its type, price and the
 * attributes it matches; an option click makes every goal option its value matches (also
 * when that goal option held already: the last click that selected a matching value is the
 * maker, so an option selected, replaced and selected again is traced to the last click;
 * when values of two option names match one goal option, the later click is its maker);
 * the buy makes the purchase. A step that makes an atom false unmakes it: another value
 * replacing a matching one, leaving the product (< prev to the results, back to search),
 * and the last step of an episode that reaches the step limit without a purchase (even a
 * refused one), which unmakes every atom still true. Edges follow what each click needs: a
 * next/prev results page the page shown before it, a product the last results page shown
 * (the search, or the page turn, that surfaced it), an option and the buy the product.
 * Description, features, reviews, < prev back to the item and other refused actions make
 * nothing and have no edges; searches have none either (they need nothing). After a reset
 * or pv_env_load nothing before is a step: the atoms a loaded state holds are true without
 * a maker, and steps before the load give no edge. On the real catalogue a product click
 * makes up to 29 atoms (PV_ENV_TRACE_ATOMS is 48).
 *
 * Saved state (after env.c's header), little-endian: payload version, model fingerprint,
 * split, task_id, seed, goal, step count, done/won, reward, page, page number, product,
 * selected option values, query text, result product ids. load() checks every field
 * against the model.
 */
#ifndef PV_WEBSHOP_H
#define PV_WEBSHOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PV_WEBSHOP_RESULTS_MAX  50 /* engine.SEARCH_RETURN_N */
#define PV_WEBSHOP_PAGE_SIZE    10 /* engine.PRODUCT_WINDOW */
#define PV_WEBSHOP_MAX_STEPS    15 /* the usual WebShop episode limit */
#define PV_WEBSHOP_QUERY_MAX    255
#define PV_WEBSHOP_MAX_OPTNAMES 8 /* option names kept per product (the data has <= 3) */
#define PV_WEBSHOP_MAX_ACTIONS  64
#define PV_WEBSHOP_MATCH_MIN    85 /* fuzzy match when token_set_ratio > 85 */
#define PV_WEBSHOP_HUMAN_TEST   500

/* The purchased product, with the fields of WebShop's product dict that get_reward reads. */
typedef struct pv_webshop_item {
    const char *name;              /* product['name'] (type reward) */
    const char *query;             /* product['query'] */
    const char *product_category;  /* "A › B › C" */
    const char *title_lower;       /* product['Title'].lower() (pv_text_py_lower) */
    const char *bullets_lower;     /* ' '.join(product['BulletPoints']).lower() */
    const char *description_lower; /* product['Description'].lower() */
    const char *const *attributes; /* product['Attributes'] */
    size_t n_attributes;
} pv_webshop_item_t;

/* The goal, with get_reward()'s goal fields. */
typedef struct pv_webshop_target {
    const char *name; /* goal['name']: the product's Title (synthetic goals) or name (human) */
    const char *query;
    const char *product_category;
    const char *const *attributes; /* goal['attributes'] */
    size_t n_attributes;
    /* goal['goal_options']: values, with their option names when the goal holds them as a
     * dict (synthetic goals: get_reward passes goal_options.items(), (name, value) pairs);
     * option_names = NULL for a list of values (human goals' instruction_options). */
    const char *const *option_names;
    const char *const *options;
    size_t n_options;
    double price_upper; /* > 0 */
} pv_webshop_target_t;

/* The terms of one reward, as get_reward(verbose=True) reports them. */
typedef struct pv_webshop_score {
    double reward;      /* the total */
    double r_type;      /* 1, 0.5, 0.1 or 0 */
    double title_score; /* noun overlap of the names */
    bool query_match;
    bool category_match;
    bool price_ok;
    uint32_t n_attr_match;
    uint32_t n_option_match;
    uint64_t attr_matched;   /* bit g: goal attribute g matched (the first 64) */
    uint64_t option_matched; /* bit g: goal option g matched by a purchased value (first 64) */
} pv_webshop_score_t;

/* WebShop's get_reward(purchased_product, goal, price, options) as on princeton-nlp/WebShop's
 * main branch (web_agent_site/engine/goal.py, commit d149d0d7), with the purchased options
 * given as their values (list(options.values()); the names do not take part), n_bought:
 *   r_type (get_type_reward): query_match = queries equal; category_match = at least two
 *     distinct '›'-separated, str.strip()ped category levels in common; title_score =
 *     |set(nouns(goal name)) & set(nouns(purchased name))| / len(nouns(goal name)) (0.2 when
 *     the goal name has no noun); r_type = 1, then 0.5 unless (query_match or
 *     category_match or title_score > 0.2), then 0.1 if title_score < 0.1, then 0 if
 *     title_score == 0. The nouns are an approximation of spaCy's (see webshop.h above).
 *   attributes (get_attribute_reward): a goal attribute matches when token_set_ratio(a
 *     product attribute, it) > 85, or else when it is a substring of the lower-cased Title,
 *     bullets or Description.
 *   options (get_option_reward(purchased values, goal options)): both sides pass
 *     normalize_color; each goal option counts once when some purchased value has
 *     token_set_ratio(value, goal option) > 85. No product-text fallback, no exact rule for
 *     size. A synthetic goal's options are (name, value) tuples: normalize_color leaves a
 *     tuple alone unless its name or value is exactly a colour, and the fuzzy match then
 *     compares the value with "('name', 'value')" (pv_text_token_set_ratio_pair). The
 *     purchased value, a string, is colour-normalised by substring, so buying the goal
 *     product with exactly the goal options scores below 1 when an option value contains a
 *     colour word without being one ("dash" -> "ash" no longer matches ('style', 'dash');
 *     "2005brown" -> "brown" against ('color', '2005brown')), as it does in WebShop.
 *   price: r_price = price <= price_upper.
 *   reward = (n_attr_match + n_option_match + r_price) / (len(attributes) + len(goal options)
 *     + 1) * r_type.
 * Allocates nothing; strings longer than PV_TEXT_RATIO_MAX code points are compared on
 * their prefix in the fuzzy step. */
void pv_webshop_score(const pv_webshop_item_t *item, const pv_webshop_target_t *goal, double price,
                      const char *const *bought, size_t n_bought, pv_webshop_score_t *out);

/* The goal options (bit g for goal->options[g], g < 64) that one purchased option value
 * matches by get_option_reward's rule above (normalize_color on both sides, token_set_ratio
 * > 85); pv_webshop_score's option_matched is the OR over the purchased values. Allocates
 * nothing. */
uint64_t pv_webshop_option_matches(const pv_webshop_target_t *goal, const char *value);

/* engine/normalize.py normalize_color: the first entry of WebShop's COLOR_SET that is a
 * substring of `s` (a static string), else `s` itself. */
const char *pv_webshop_normalize_color(const char *s);

/* The nouns of a product name as the type reward sees them (see above), lower-cased, written
 * NUL-separated into buf[0..cap); returns how many (duplicates kept, in order). */
size_t pv_webshop_name_nouns(const char *name, char *buf, size_t cap);

#endif
