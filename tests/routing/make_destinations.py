# Writes etom-destinations.jsonl (tests/routing/README.md) from the requests below, checking that
# every tool named exists in the ETOM catalog given as the first argument. Written 2026-11-27
# (ninth round) before any rule for them and committed before they were measured: a main step
# and a file the result should go to, named without a verb of saving ("… into /root/hn.md", "…
# to /srv/q.json", "… as a Markdown file at …") or with an unusual one ("dump", "stash", "log"),
# as human tasks name them; and four requests whose destination belongs to the main tool itself
# (move, copy, download, convert), where no second step should appear.
import json
import os
from catalog_groups import t, one, SAVE
Q=[
 ("Summarize the hottest threads on r/rust into /root/reddit/rust.md",
  [one("MCP Reddit Server","fetch_reddit_hot_threads"),SAVE]),
 ("Get the current Binance order book for BTCUSDT to /srv/data/orderbook.json",
  [one("Binance Cryptocurrency MCP","get_order_book"),SAVE]),
 ("The latest crypto news as a Markdown file at ~/news/crypto.md, please",
  [one("Crypto News MCP Server","read_news"),SAVE]),
 ("Search arXiv for recent papers on retrieval-augmented generation, with the titles and links in /root/papers/rag.txt",
  [one("ArXiv MCP Server","search_papers"),SAVE]),
 ("Pull the fundamentals of Samsung Electronics from the KOSPI server into ~/kospi/samsung.csv",
  [one("kospi-kosdaq-stock-server","get_stock_fundamental"),SAVE]),
 ("List the Jira projects we have, output to /tmp/jira-projects.txt",
  [one("Jira communication server MCP Server","list_projects"),SAVE]),
 ("Yahoo Finance news for NVDA in a text file at /home/me/nvda-news.txt",
  [one("Yahoo Finance MCP Server","get_ticker_news"),SAVE]),
 ("I need the npm vulnerabilities of lodash written up as /root/audit/lodash.md",
  [one("NPM Sentinel MCP","npmVulnerabilities"),SAVE]),
 ("Trending GitHub developers this week -> /root/trending/devs.json",
  [one("mcp-github-trending MCP Server","get_github_trending_developers"),SAVE]),
 ("Fetch the MediaWiki page on Alan Turing and its edit history into /data/wiki/turing.md",
  [one("MediaWiki MCP Server","get-page"),one("MediaWiki MCP Server","get-page-history"),SAVE]),
 ("Dump the recent BTC liquidations to ~/liq/latest.json",
  [one("Crypto Liquidations MCP","get_latest_liquidations"),SAVE]),
 ("Stash the WeatherXM forecast for cell 871fb4671ffffff in /var/tmp/forecast.json",
  [one("WeatherXM PRO MCP Server","get_forecast_for_cell"),SAVE]),
 ("Log the Reddit comments of submission abc123 to /root/logs/abc123.txt",
  [one("Reddit MCP","get_comments_by_submission"),SAVE]),
 ("Record the results of the JQL query 'project = OPS AND status = Open' in /srv/ops/open.csv",
  [one("Jira communication server MCP Server","execute_jql"),SAVE]),
 ("Get the repository structure of facebook/react and keep a copy at /root/react-tree.txt",
  [one("GitHub Repository MCP Server","get-repo-structure"),SAVE]),
 ("Look up the Yahoo Finance ticker info for AAPL and put out a JSON file at /tmp/aapl.json",
  [one("Yahoo Finance MCP Server","get_ticker_info"),SAVE]),
 ("Read the Notion page 3f2a and have its text under /root/notion/3f2a.md",
  [one("Notion ReadOnly MCP Server","API-retrieve-a-page"),SAVE]),
 ("Search the WikiJS pages for 'onboarding' and send the results to /root/onboarding.txt",
  [one("WikiJS MCP Server","search_pages"),SAVE]),
 ("Get the 24-hour ticker for ETHUSDT on Binance, result in /tmp/eth-24h.json",
  [one("Binance Cryptocurrency MCP","get_24hr_ticker"),SAVE]),
 ("Query the CoinMarketCap quotes for BTC and ETH; I want them in /srv/reports/quotes.json",
  [one("Coinmarket MCP server","get_quotes"),SAVE]),
 # The destination belongs to the main tool: one step.
 ("Move /root/drafts/report.md to /root/final/report.md",
  [one("Filesystem MCP Server","move_items")]),
 ("Copy /etc/nginx/nginx.conf to /root/backup/nginx.conf",
  [one("Filesystem MCP Server","copy_items")]),
 ("Download https://example.com/changelog to /root/changelog.html",
  [one("Fetch-Save MCP Server","fetch-save")]),
 ("Convert /root/notes/plan.md to /root/notes/plan.docx",
  [one("mcp-pandoc: A Document Conversion MCP Server","convert-contents")]),
]
# Written after the rule (docs/routing.md, "A file named for the result") and committed before
# it was measured on them, in other words and over other tools: does the rule carry?
AFTER=[
 ("Could you grab the latest observations from WeatherXM station ST-77 and drop them into ~/weather/st77.json?",
  [one("WeatherXM PRO MCP Server","get_latest_observation"),SAVE]),
 ("Top ETFs in the technology sector from Yahoo Finance, saved into /data/etfs/tech.csv",
  [one("Yahoo Finance MCP Server","get_top_etfs"),SAVE]),
 ("Search npm for markdown parsers; put the results into /tmp/npm-markdown.txt",
  [one("NPM Sentinel MCP","npmSearch"),SAVE]),
 ("Binance daily klines for SOLUSDT over the last month, as a CSV at ~/klines/sol.csv",
  [one("Binance Cryptocurrency MCP","get_klines"),SAVE]),
 ("I'd like the MediaWiki search results for quantum computing written to /root/wiki/quantum.txt",
  [one("MediaWiki MCP Server","search-page"),SAVE]),
 ("Get the top posts about Rust from Reddit and export them to reddit-rust.json",
  [one("Reddit MCP","search_posts"),SAVE]),
 ("Pull the list of Jira projects -> projects.md",
  [one("Jira communication server MCP Server","list_projects"),SAVE]),
 ("Fetch today's Bitcoin liquidations, then store everything in /srv/liq/today.json",
  [one("Crypto Liquidations MCP","get_latest_liquidations"),SAVE]),
 ("Rename /root/notes/a.txt to /root/notes/b.txt",
  [one("Filesystem MCP Server","move_items")]),
 ("Copy the contents of /etc/hosts to /root/hosts.bak",
  [one("Filesystem MCP Server","copy_items")]),
]
out=os.path.join(os.path.dirname(os.path.abspath(__file__)),"etom-destinations.jsonl")
with open(out,"w") as f:
    for i,(q,groups) in enumerate(Q+AFTER,1):
        rel=[];seen=set()
        for g in groups:
            for x in g[:1]:
                k=(x['server'],x['name'])
                if k not in seen: seen.add(k); rel.append(x)
        kind="save" if len(groups)>1 else "own"
        written="before the rule" if i<=len(Q) else "after the rule"
        f.write(json.dumps({"id":f"DS-{i:03d}","query":q,"relevant":rel,"relevant_groups":groups,"destination":kind,"written":written})+"\n")
print(len(Q+AFTER),"requests ->",out)
