"""What the oracle says before its calls: a seeded grammar of research moves.

Each move (planning, searching for a list, paging through it, checking a candidate and keeping
or dropping it, following a link for a column, noticing a failed or cut-off page, an archived
snapshot or an older duplicate, weighing two sources that disagree, taking stock, submitting) has many
phrasings, with optional lead-ins and connectives; a message strings together the moves of one
turn. Every choice is drawn from the episode's own generator (seeded by task, sample and turn),
so the same trajectory always reads the same and different ones read differently. The text
states real reasoning: the condition checked, the value seen and on which page, why a row is
dropped, what is still missing.
"""

from __future__ import annotations

import random
import string

EN: dict[str, tuple[str, ...]] = {
    # planning
    "plan_table": (
        "The question asks for every {one} {conds}; the table needs {ncols} columns ({cols}).",
        "I need to list all {plural} {conds} and fill in {ncols} columns: {cols}.",
        "So the task: find each {one} {conds}, then report {cols}.",
        "What's wanted is a complete table of {plural} {conds}, with {cols}.",
        "Let me restate it: {plural} {conds}; for each I need {cols}.",
        "This is a list question: every {one} {conds}, {ncols} columns ({cols}).",
    ),
    "plan_ranked": (
        "The question asks for the top {n} {plural}{scope} by {attr}, ranked, with {cols}.",
        "I need the {n} {plural}{scope} with the {dir} {attr}, so I have to see the {attr} of every candidate before ranking.",
        "Ranking question: {n} {plural}{scope}, ordered by {attr} ({dir} first); the table also needs {cols}.",
        "To rank the {plural}{scope} by {attr} I need every candidate's figure, not just the ones that look large.",
    ),
    "plan_timeline": (
        "The question wants every tenure ({label}) of {target}{period}, with start and end years and {cols}.",
        "I need the full history of {label} for {target}{period}: one row per tenure, plus {cols}.",
        "This is a timeline: each \"{label}\" tenure of {target}{period}, with when it began and ended.",
        "So: list every tenure under \"{label}\" for {target}{period}, with years, and fill in {cols}.",
    ),
    "plan_events": (
        "The question asks for every {label} dated {period}{scope}, each with its exact date; columns: {cols}.",
        "I need all {label} events {period}{scope}: the date of each, and {cols}.",
        "This is an event list: {label}{scope}, {period}, one row per event with its date.",
    ),
    "plan_chain": (
        "This is a chain of {n} links starting from {start}; I'll follow them one page at a time.",
        "I have to go from {start} through {n} linked facts to the answer.",
        "Starting point: {start}. Then {n} hops, each from one page to the next.",
        "The answer sits {n} links away from {start}, so I'll walk the chain.",
    ),
    "strategy_part": (  # {what}: the list's subject, "companies in Braeria", "award ceremonies won by albums from Riia"
        "A list of {what} would give me the candidates.",
        "The fastest start is a list of {what}.",
        "I'll look for a directory of {what} and work through it.",
        "Best to start from an overview list of {what}.",
    ),
    "strategy_back": (
        "{name}'s own page should list the {plural} linked to it.",
        "I'll start from {name}: its page lists the {plural} I need to check.",
        "The page about {name} is the natural starting point for the candidates.",
        "Candidates first: {name}'s article should name them.",
    ),
    "strategy_union": (
        "Either condition can qualify a row, so I'll gather candidates from both sides and merge them.",
        "Because of the 'or', I need the candidates of each alternative, then the union.",
        "Two ways in: I'll collect both lists and check every name on them.",
    ),
    "strategy_parts": (
        "First the countries that qualify, then each one's list of {plural}.",
        "I'll find the countries concerned and read their lists of {plural}.",
        "The {plural} are listed per country, so I'll go country by country.",
    ),
    "strategy_anchor": (
        "I'll open {name}'s page and read its history.",
        "{name}'s article should list every tenure with its years.",
        "Everything starts at {name}; its page should have the list.",
    ),
    # searching
    "search_list": (
        "Searching for \"{q}\".",
        "Let me search \"{q}\".",
        "I'll run a search for \"{q}\".",
        "First search: \"{q}\".",
        "A search for \"{q}\" should surface it.",
        "Trying the query \"{q}\".",
    ),
    "search_entity": (
        "I need {name}'s page, so I'll search for it.",
        "Looking up {name}.",
        "Searching for {name} to get to its article.",
        "Let me find the page about {name}.",
    ),
    "search_again": (
        "That search didn't turn up what I need; trying \"{q}\" instead.",
        "Nothing useful there, so I'll rephrase: \"{q}\".",
        "No matching page in those results. Another angle: \"{q}\".",
        "The results miss it; I'll search \"{q}\".",
        "Let me reformulate the query as \"{q}\".",
    ),
    "search_retry": (
        "Running the search for \"{q}\" again.",
        "Once more: \"{q}\".",
        "Sending \"{q}\" again.",
        "Trying \"{q}\" a second time.",
    ),
    "search_ahead": (
        "Searching {names} with their {label} first; the results may already show it.",
        "Before opening the next ones, a search for the {label} of {names}: the snippets may settle them.",
        "Looking up {names} and {label} now, so I only open the pages the results leave open.",
        "A quick search for the {label} of {names}; if the results give it, there's no need to open their pages.",
    ),
    "search_failed": (
        "The search failed ({why}); I'll send it again.",
        "Search error ({why}). Retrying.",
        "That search didn't go through ({why}), so once more.",
        "{why} on the search; trying it again.",
    ),
    "no_results": (
        "No results for \"{q}\".",
        "The search for \"{q}\" came back empty.",
        "Nothing found for \"{q}\".",
        "Zero results for \"{q}\".",
    ),
    "give_up_search": (
        "After several tries I can't find a page for {name}; I'll work with what I have.",
        "Still no page for {name}; moving on without it.",
    ),
    # lists
    "found_list": (
        "\"{title}\" is the list I need; it runs to {pages} page{s}.",
        "Found it: \"{title}\", {pages} page{s} long.",
        "The result \"{title}\" is the directory; {pages} page{s} to read.",
        "\"{title}\" looks right ({pages} page{s}).",
    ),
    "open_list": (
        "Opening {titles}.",
        "I'll read {titles}.",
        "Next: {titles}.",
        "Reading {titles} now.",
    ),
    "paging": (
        "Page {done} of {pages} read; {left} to go.",
        "That's {done} of {pages} pages of the list.",
        "{left} more page{s} of the list to read.",
        "So far {done}/{pages} list pages.",
    ),
    "list_done": (
        "The list is complete: {n} candidate{s}.",
        "All {pages} list page{ps} read, {n} name{s} in total.",
        "That gives me {n} candidate{s} to check, from {pages} list page{ps}.",
        "I now have the full list: {n} candidate{s} over {pages} page{ps}.",
    ),
    "candidates_found": (
        "That gives me {n} candidate{s} to check.",
        "That leaves {n} candidate{s} to look at.",
        "{n} candidate{s} so far; each has to be checked.",
    ),
    "full_list": (
        "{name}'s page shows only part of the list and links to the full one ({count}); opening it.",
        "The section on {name} is cut short, so I'll follow its link to the complete list of {count}.",
        "Only some are listed on {name}'s page; the full list of {count} is one click away.",
    ),
    "from_listing": (
        "The list already shows {col} for each entry, so I can filter on it directly.",
        "Handy: the listing has a {col} column, which settles that condition without opening every page.",
        "The {col} column of the list decides the condition for most names.",
    ),
    # checking candidates
    "open_candidates": (
        "Opening {names} to check {what}.",
        "Next I'll check {what} for {names}.",
        "Checking {names}: {what}.",
        "Let me read the pages of {names} and verify {what}.",
        "Now {names}; I need to see {what}.",
        "I'll look at {names} for {what}.",
    ),
    "open_rows": (
        "Reading {names} for the table's columns.",
        "Opening {names} to fill in their rows.",
        "Now the details of {names}.",
        "Collecting the column values from {names}.",
    ),
    "open_entity": (
        "Opening {names}.",
        "Let me read {names}.",
        "Next, the article on {names}.",
        "I'll look at {names} first.",
    ),
    "open_walk": (
        "Opening {names}: each page has a \"{label}\" list I need.",
        "{names} next; their \"{label}\" sections give the next level of candidates.",
        "The candidates hang off {names} (their \"{label}\" lists), so those pages come next.",
    ),
    "open_hop": (
        "To check {cond} I need the linked pages: {names}.",
        "{names}: needed to check {cond}.",
        "For {cond}, opening {names}.",
        "Whether {cond} holds depends on {names}; opening them.",
    ),
    "open_linked": (
        "For {col} I need the linked pages: {names}.",
        "The {col} column means following links to {names}.",
        "Opening {names} for {col}.",
        "{names}: needed for {col}.",
    ),
    "keep": (
        "{name}: {label} {value} ({where}), which fits \"{cond}\".",
        "{name} qualifies: {where} gives {label} {value}.",
        "{name} passes \"{cond}\" ({label}: {value}).",
        "Confirmed {name} — {label} {value} per {where}.",
        "{name} stays in: {value} for {label}.",
    ),
    "reject": (
        "{name} is out: {where} gives {label} {value}, so it fails \"{cond}\".",
        "Dropping {name} — {label} is {value} ({where}), not \"{cond}\".",
        "{name} doesn't fit \"{cond}\": {label} {value}, per {where}.",
        "Excluding {name}: {where} gives {label} {value}.",
        "{name} fails the condition ({label}: {value}), so it goes.",
        "Not {name}: {where} lists {label} {value}, which rules it out.",
    ),
    "reject_excluded": (
        "{name} matches \"{cond}\" ({label}: {value}, {where}), which the question excludes.",
        "{name} has {label} {value} ({where}); that's exactly what the question rules out.",
        "Excluding {name}: \"{cond}\" holds for it ({value}).",
    ),
    "reject_many": (
        "From the list, {n} entries fail on {label} and drop out, e.g. {examples}.",
        "{n} names are ruled out by their {label} in the listing ({examples}, ...).",
        "The listing's {label} column eliminates {n} candidates, such as {examples}.",
    ),
    "unreadable": (
        "I couldn't load {name}'s page after several tries, so I can't verify it and leave it out.",
        "{name} keeps failing to load; without its page I won't include it.",
    ),
    # values
    "follow": (
        "{from_name} → {label}: {to_name}.",
        "Following {label} from {from_name} leads to {to_name}.",
        "{from_name}, under {label}: {to_name}; next, that page.",
        "On {from_name}'s page, {label} points to {to_name}.",
    ),
    "chain_broken": (
        "The chain breaks off at {name}: the page does not give the next link, so I can't name the answer.",
        "I can't follow the chain past {name}; the answer stays unknown.",
    ),
    "answer_found": (
        "The chain ends at {value}.",
        "That gives the answer: {value}.",
        "So the answer is {value}.",
        "Final hop done — {value}.",
    ),
    # trouble
    "failed": (
        "Loading {page} failed ({why}); I'll retry.",
        "{page} didn't load ({why}). Trying again.",
        "Got {why} for {page}; one more attempt.",
        "{page}: {why}. Retrying it.",
    ),
    "moot": (
        "{page} did not load properly, but what I read elsewhere already settles it.",
        "No need to retry {page}: I have what I needed from it from other pages.",
    ),
    "gave_up": (
        "{page} failed {n} times; I'll stop trying it and work with what else I have.",
        "After {n} attempts {page} still won't load, so I move on without it.",
        "I couldn't load {page} after {n} tries; giving up on that page.",
    ),
    "off_article": (
        "The encyclopedia article on {page} has no \"{label}\" entry; its external link to {site} should have it.",
        "The article on {page} leaves \"{label}\" out, so I'll check {site}, which it links.",
        "No \"{label}\" in the article on {page}. It links {site}; I'll look there.",
    ),
    "not_on_profile": (
        "I can't find \"{label}\" for {page} stated plainly on {site} either, so that cell stays unknown.",
        "Nothing on {site} settles \"{label}\" for {page} either; I'll mark it unknown rather than guess.",
    ),
    "other_source": (
        "Since the encyclopedia page on {page} won't load, I'll use {site}, which has its key facts.",
        "{page}'s article keeps failing; {site} covers the same facts, so I'll read that instead.",
    ),
    "cut": (
        "{page} came back cut off part-way; reloading it.",
        "The page {page} was only partially loaded, so I'll fetch it again.",
        "Incomplete response for {page}; loading it once more.",
    ),
    "archived": (
        "{page} says it was last edited on {date}, so it may be out of date; I'll load it again.",
        "That version of {page} dates from {date} (its last edit). I want the current one.",
        "An old version of {page} ({date}) — not reliable for today's values, reloading.",
    ),
    "archived_kept": (
        "The current version of {page} won't load; the one last edited on {date} is the freshest I have, so I'll use it with care.",
        "I only have {page} as it stood on {date}; I'll rely on it, knowing it may be dated.",
    ),
    "partial_kept": (
        "{page} never loaded in full; I'll use the part I got.",
        "Only part of {page} ever came through, so I work with that part.",
    ),
    "copy_check": (
        "I'll also open {site}'s page on {name} to compare with the encyclopedia.",
        "To be safe I'll compare {name} against the {site} version too.",
        "Opening {site} as a second source for {name}.",
        "A second source for {name}: {site}. Let me compare.",
    ),
    "namesake": (
        "The {site} page is about a different {name} ({label} {value}), a namesake, so it says nothing about this one.",
        "Careful: {site} describes another {name} ({label}: {value}); not the same entity.",
        "That {site} entry is a namesake ({label} {value}), not the {name} I'm checking.",
    ),
    "agree": (
        "{site} agrees with the encyclopedia on {name}'s {label} ({value}).",
        "Cross-check done: {site} gives the same {label} for {name}, {value}.",
        "The {site} page matches: {label} {value}.",
    ),
    "conflict": (
        "The sources disagree on {name}'s {label}: {site_a} says {a}, {site_b} says {b}. I'll go with {chosen} from {chosen_site}, the {why}.",
        "Conflict for {name} ({label}): {a} on {site_a} versus {b} on {site_b}. Taking {chosen} ({chosen_site}, the {why}).",
        "{site_b} gives {b} for {name}'s {label}, but {site_a} gives {a}; {chosen_site} is the {why}, so {chosen} stands.",
    ),
    "older_copy": (
        "{site} has a second, older page on {page} (updated {date}) whose figures differ; I'll go by the current one.",
        "Two pages on {page}: the one on {site} was last updated {date} and disagrees, so I set it aside.",
        "The {site} page on {page} dates from {date} and its numbers are off from the current listing; I won't use it.",
    ),
    # progress
    "progress": (
        "Checked {done} of {total} candidates so far; {kept} qualify.",
        "{done} checked, {kept} confirmed, {left} candidates left.",
        "Progress: {done}/{total} checked, {kept} in the table.",
        "{left} of {total} candidates still to check; {kept} kept so far.",
    ),
    "missing": (
        "Still missing: {what}.",
        "What's left: {what}.",
        "Remaining gaps: {what}.",
    ),
    "ranked_done": (
        "I have the {attr} of all {n} candidates; sorted, the top {k} are clear.",
        "All {n} figures collected; ranking them by {attr} gives the {k} rows.",
        "With every {attr} in hand ({n} candidates), the first {k} are settled.",
    ),
    # ending
    "final_table": (
        "All {n} row{s} are verified against their pages ({dropped} candidate{ds} dropped). Submitting the table.",
        "Done: {n} row{s}, each checked on the pages I read; {dropped} candidate{ds} did not qualify. Here is the table.",
        "That completes the table with {n} row{s} (I excluded {dropped}). Submitting.",
        "Every row has been checked; {n} in total, {dropped} rejected along the way. Final answer below.",
    ),
    "final_chain": (
        "I followed every link of the chain; submitting the answer.",
        "The chain is complete, so here is the answer.",
        "All hops confirmed on their pages. Submitting.",
    ),
    "out_of_room": (
        "My notes on this list now fill the context, and the last stretch settled nothing new, so I'll submit the "
        "{n} row{s} I could verify; {left} candidate{ls} stay unchecked.",
        "The research state alone now takes up most of the context, so no more candidates can be checked; "
        "submitting the {n} verified row{s} ({left} candidate{ls} left unchecked).",
    ),
    "out_of_turns": (
        "I'm out of turns, so I'll submit the {n} row{s} I could verify.",
        "No more turns left; submitting the {n} verified row{s} I have.",
    ),
    "lead": ("", "", "", "", "Next, ", "Now, ", "OK — ", "Right, ", "Good, ", "Moving on: ", "Then: ", "Alright, "),
}

ZH: dict[str, tuple[str, ...]] = {
    "plan_table": (
        "问题要求找出所有{conds}的{plural}，表格需要{ncols}列（{cols}）。",
        "我需要列出每一个{conds}的{one}，并填写{cols}。",
        "任务是：找出{conds}的{plural}，再给出{cols}。",
        "这是一个列表类问题：{conds}的{plural}，共{ncols}列（{cols}）。",
    ),
    "plan_ranked": (
        "问题要求按{attr}排出前{n}个{plural}{scope}，并给出{cols}。",
        "我需要{attr}{dir}的{n}个{plural}{scope}，所以排名前要看到每个候选的{attr}。",
        "排名题：{plural}{scope}按{attr}排序，前{n}名，另需{cols}。",
    ),
    "plan_timeline": (
        "问题要求{target}的每一段{label}任期{period}，包括起止年份和{cols}。",
        "我需要{target}完整的{label}记录{period}：每段任期一行，另加{cols}。",
        "这是时间线问题：{target}的每段{label}{period}，注明开始和结束。",
    ),
    "plan_events": (
        "问题要求{period}{scope}的每一次{label}，注明确切日期和{cols}。",
        "我需要{period}{scope}所有{label}事件：每个事件的日期以及{cols}。",
    ),
    "plan_chain": (
        "这是一条从{start}出发的{n}步关联链，我会一页一页地跟下去。",
        "我要从{start}经过{n}个相互关联的事实找到答案。",
        "起点是{start}，之后要经过{n}跳。",
    ),
    "strategy_part": (  # {what}: 宁云省的公司
        "一份{what}列表就能给出候选名单。",
        "最快的办法是找{what}目录，然后逐一核对。",
        "我先找一个{what}的总览列表。",
    ),
    "strategy_back": (
        "{name}的页面应该列出了与它相关的{plural}。",
        "我从{name}入手：它的页面列出了需要核对的{plural}。",
        "先看{name}的条目，候选应该都在上面。",
    ),
    "strategy_union": (
        "两个条件满足其一即可，所以我会分别收集两边的候选再合并。",
        "因为是“或”，我需要两种情况各自的候选，再取并集。",
    ),
    "strategy_parts": ("先找出符合条件的国家，再逐一查看它们的{plural}列表。", "{plural}按国家列出，我逐个国家查看。"),
    "strategy_anchor": (
        "我打开{name}的页面，读它的历史记录。",
        "{name}的条目应该列出了每段任期及年份。",
    ),
    "search_list": ("搜索“{q}”。", "我来搜索“{q}”。", "先搜一下“{q}”。", "用“{q}”搜索应该能找到。"),
    "search_entity": ("我需要{name}的页面，先搜索一下。", "查找{name}。", "搜索{name}以找到它的条目。"),
    "search_again": ("这次搜索没找到需要的页面，改搜“{q}”。", "结果里没有，我换个说法：“{q}”。", "换个角度搜索“{q}”。"),
    "search_retry": ("再搜索一次“{q}”。", "重新发送搜索“{q}”。"),
    "search_ahead": ("先搜索{names}的{label}，搜索结果可能已经给出。", "打开下一批页面之前，先搜一下{names}的{label}，摘要也许就够了。"),
    "search_failed": ("搜索失败（{why}），我再试一次。", "搜索出错（{why}），重试。"),
    "no_results": ("搜索“{q}”没有结果。", "“{q}”的搜索结果为空。"),
    "give_up_search": ("多次尝试后仍找不到{name}的页面，我先用手头的信息。",),
    "found_list": ("“{title}”就是我需要的列表，共{pages}页。", "找到了：“{title}”，共{pages}页。"),
    "open_list": ("打开{titles}。", "接着读{titles}。", "现在看{titles}。"),
    "paging": ("列表已读{done}/{pages}页，还剩{left}页。", "还有{left}页列表要读。"),
    "list_done": ("列表已读完：共{n}个候选。", "全部{pages}页列表读完，共{n}个名字。", "这样就有{n}个候选需要核对，来自{pages}页列表。"),
    "candidates_found": ("这样就有{n}个候选需要核对。", "目前共有{n}个候选，需要逐一核对。"),
    "full_list": ("{name}的页面只列出了一部分，并链接到完整列表（{count}项），我打开它。",
                  "{name}页面上的列表不全，我点开共{count}项的完整列表。"),
    "from_listing": ("列表里已经有每一项的{col}，可以直接据此筛选。", "列表带有{col}一栏，这个条件不用逐页打开就能判断。"),
    "open_candidates": ("打开{names}，核对{what}。", "接下来核对{names}的{what}。", "看一下{names}：{what}。"),
    "open_rows": ("读取{names}的信息以填表。", "打开{names}，补全各列。", "现在看{names}的详细信息。"),
    "open_entity": ("打开{names}。", "先看{names}的条目。"),
    "open_walk": ("打开{names}：每个页面都有我需要的“{label}”列表。", "接下来是{names}，它们的“{label}”部分列出了下一层候选。"),
    "open_hop": ("要核对{cond}，需要打开相关页面：{names}。", "为了核对{cond}，打开{names}。"),
    "open_linked": ("{col}需要打开相关页面：{names}。", "为了{col}，打开{names}。"),
    "keep": ("{name}：{label}为{value}（{where}），符合“{cond}”。", "{name}符合条件：{where}显示{label}为{value}。",
             "确认{name}——据{where}，{label}为{value}。"),
    "reject": ("{name}不符合：{where}显示{label}为{value}，不满足“{cond}”。", "排除{name}——{label}是{value}（{where}）。",
               "{name}的{label}为{value}（{where}），因此排除。"),
    "reject_excluded": ("{name}满足“{cond}”（{label}：{value}，{where}），而问题恰恰要排除这种情况。",
                        "{name}的{label}为{value}（{where}），属于问题排除的范围。"),
    "reject_many": ("根据列表，有{n}项因{label}不符被排除，例如{examples}。", "列表中的{label}一栏排除了{n}个候选，如{examples}。"),
    "unreadable": ("{name}的页面多次加载失败，无法核实，不予收录。",),
    "follow": ("{from_name} → {label}：{to_name}。", "从{from_name}沿{label}找到{to_name}。", "{from_name}的{label}是{to_name}，接着看这一页。"),
    "chain_broken": ("链条在{name}处断了：页面上没有下一步的链接，无法给出答案。",),
    "answer_found": ("链条的终点是{value}。", "答案是{value}。", "最后一跳完成——{value}。"),
    "failed": ("打开{page}失败（{why}），我再试一次。", "{page}没有加载出来（{why}），重试。"),
    "moot": ("{page}没有正常加载，不过其他页面已经给出了需要的信息。",),
    "gave_up": ("{page}已失败{n}次，我不再尝试，用其他信息继续。", "尝试{n}次后{page}仍无法加载，只好放弃这个页面。"),
    "off_article": ("{page}的百科条目没有写“{label}”，我去它链接的{site}查看。", "百科条目里没有{page}的“{label}”，条目的外部链接指向{site}，去那里找。"),
    "not_on_profile": ("{site}上也找不到{page}明确写出的“{label}”，这一格只能写未知。",),
    "other_source": ("{page}的百科页面打不开，我改用{site}，上面有同样的关键信息。",),
    "cut": ("页面{page}只加载了一部分，我重新打开。", "{page}的内容不完整，再加载一次。"),
    "archived": ("{page}显示最后修订于{date}，可能已经过时，我重新打开。", "{page}的这个版本停留在{date}，我需要最新版本。"),
    "archived_kept": ("{page}的当前版本一直打不开，{date}修订的版本是我能拿到的最新版本，只能谨慎使用。",),
    "partial_kept": ("{page}始终没能完整加载，我只能用已经拿到的部分。",),
    "copy_check": ("我也打开{site}上关于{name}的页面，与百科对照一下。", "为稳妥起见，再用{site}的版本核对{name}。"),
    "namesake": ("{site}上的页面说的是另一个{name}（{label}：{value}），同名不同人，与此无关。",),
    "agree": ("{site}关于{name}的{label}与百科一致（{value}）。", "交叉核对：{site}给出的{label}相同，为{value}。"),
    "conflict": ("关于{name}的{label}，来源不一致：{site_a}为{a}，{site_b}为{b}。我采用{chosen_site}的{chosen}，因为它是{why}。",
                 "{name}的{label}有冲突：{site_a}是{a}，{site_b}是{b}；{chosen_site}是{why}，所以取{chosen}。"),
    "older_copy": ("{site}上还有一个关于{page}的旧页面（更新于{date}），数字不一致，我以当前页面为准。",
                   "关于{page}有两个页面：{site}上那个最后更新于{date}，与现行数据不符，我不采用。"),
    "progress": ("已核对{done}/{total}个候选，其中{kept}个符合。", "已确认{kept}行，{total}个候选中还剩{left}个。"),
    "missing": ("还缺：{what}。", "剩下的：{what}。"),
    "ranked_done": ("{n}个候选的{attr}都已拿到，排序后前{k}名很清楚。", "全部{n}个数值已收集，按{attr}排序得到{k}行。"),
    "final_table": ("{n}行都已在各自的页面上核实（排除了{dropped}个候选），提交表格。", "完成：共{n}行，每行都核对过；{dropped}个候选不符合。"),
    "final_chain": ("链条上的每一步都已核实，提交答案。", "链条完整，下面是答案。"),
    "out_of_turns": ("轮次已用完，我提交已经核实的{n}行。",),
    "out_of_room": ("研究笔记已占满上下文，上一段没有新的进展，我提交已经核实的{n}行；还有{left}个候选未能核实。",),
    "lead": ("", "", "", "接下来，", "好的，", "然后，"),
}

ERRORS_ZH = (("429", "请求过多，被限流"), ("503", "服务暂时不可用"), ("502", "网关错误"), ("500", "服务器内部错误"),
             ("timed out", "请求超时"))
OWN_PAGE = {"en": ("its article", "its own page", "the encyclopedia entry", "its infobox"),
            "zh": ("它的条目", "它自己的页面", "百科条目", "信息框")}
SNIPPET_WHERE = {"en": ("its search result", "the snippet of its article", "the search snippet"),
                 "zh": ("搜索结果摘要", "它条目的搜索摘要")}
WHY = {"en": {"encyclopedia": "encyclopedia entry", "official": "official page", "fresher": "more recent source"},
       "zh": {"encyclopedia": "百科条目", "official": "官方页面", "fresher": "更新的来源"}}


class Voice:
    """The oracle's phrasings for one episode, drawn from its own seeded generator."""

    def __init__(self, language: str, seed: int):
        self.lang = "zh" if language == "zh" else "en"
        self.bank = ZH if self.lang == "zh" else EN
        self.rng = random.Random(seed)
        self.sep = "" if self.lang == "zh" else " "
        self.fields: set[str] = set()

    def say(self, move: str, **slots) -> str:
        text = self.rng.choice(self.bank[move])
        self.fields = {f for _, f, _, _ in string.Formatter().parse(text) if f}  # the slots this phrasing states
        return text.format(**slots)

    def lead(self) -> str:
        return self.rng.choice(self.bank["lead"])

    def join(self, parts: list[str]) -> str:
        parts = [p for p in parts if p]
        if not parts:
            return ""
        first = self.lead()
        text = self.sep.join(parts)
        if self.lang == "en" and first:
            word = text.split(" ", 1)[0].rstrip(":,")
            if word in ("Next", "Now", "Then"):
                first = ""
            elif word in _STARTERS and first.endswith((", ", "— ", ": ")):
                text = text[0].lower() + text[1:]
        return first + text

    def names(self, names: list[str], limit: int = 4) -> str:
        names = [n for n in names if n]
        if self.lang == "zh":
            return "、".join(names[:limit]) + (f"等{len(names)}个" if len(names) > limit else "")
        if len(names) <= 1:
            return names[0] if names else ""
        if len(names) > limit:
            return ", ".join(names[:limit]) + f" and {len(names) - limit} more"
        return ", ".join(names[:-1]) + " and " + names[-1]

    def error(self, text: str) -> str:
        """A tool's error, short, in the message's language ('429: Too Many Requests', '请求过多')."""
        head = text.split(". ")[0].replace("Error: ", "").replace("Error ", "").split(" while fetching")[0]
        if self.lang != "zh":
            return head
        for key, zh in ERRORS_ZH:
            if key in head:
                return zh
        return "出错"

    def own_page(self) -> str:
        return self.rng.choice(OWN_PAGE[self.lang])

    def snippet_where(self) -> str:
        return self.rng.choice(SNIPPET_WHERE[self.lang])

    def why(self, key: str) -> str:
        return WHY[self.lang][key]


# Words that start a message and read in lower case after a lead-in ("Now, opening ..."); a
# message starting with a name keeps its capital.
_STARTERS = frozenset("""The That This So Searching Opening Reading Checking Looking Let First Trying Quick Nothing No Zero After
Still Found Page All Handy Only Collecting Following Dropping Excluding Confirmed Not Recorded Loading Got Incomplete An One
There Conflict For Progress What's Remaining With Done Every Starting Best A Either Because Two Everything To Cross-checking
Final Ranking Searching Excluding Opening Candidates Zero Cross-check Careful Since Conflict There's That's What's""".split())
