# Writes etom-sent-first-2.jsonl (tests/routing/README.md) from the requests below, checking that
# every tool named exists in the ETOM catalog given as the first argument. Written 2026-11-29
# (eighteenth round) after the rule for what a message sends was built on etom-sent-first.jsonl,
# and committed before it was measured; never built on: other senders, recipients and sources,
# and some whose content has no capitalised name or path.
from set_writer import named, write
from catalog_groups import (
    CRICKET_NEWS, EMAIL, GITHUB_FILE, LINEAR_ISSUES, SMS, TODOIST_TASKS, TWEET, WHATSAPP,
    ZOOM_ACTIONS,
)
OURA_SLEEP = named("Oura MCP Server/get_today_sleep_data", "Oura MCP Server/get_sleep_data")
YAHOO_TOP = named("Yahoo Finance MCP Server/get_top_companies", "MCP Yeoman Server/get_top_companies")
HUNTER_COMPANY = named("Hunter MCP Server/enrich_company")
COIN_PRICE = named("Coincap MCP/bitcoin_price", "Coincap MCP/get_crypto_price", "CoinStats MCP Server/get-coin-by-id")
STRAVA_ACTS = named("Strava MCP Server/get_user_activities", "Strava MCP Server/get_activity")
write("etom-sent-first-2.jsonl", "sent-first-2", [
    ("Email me today's Todoist tasks.", [TODOIST_TASKS, EMAIL]),
    ("Text Priya at +1 555 0111 the README of octo/widgets on GitHub.", [GITHUB_FILE, SMS]),
    ("WhatsApp my coach last night's Oura sleep summary.", [OURA_SLEEP, WHATSAPP]),
    ("Mail cfo@acme.com the top five technology companies from Yahoo Finance.", [YAHOO_TOP, EMAIL]),
    ("Send the team at eng@acme.com the action items from my latest Zoom meeting.", [ZOOM_ACTIONS, EMAIL]),
    ("Tweet the biggest cricket headline today.", [CRICKET_NEWS, TWEET]),
    ("Email sales@acme.com what Hunter knows about the company stripe.com.", [HUNTER_COMPANY, EMAIL]),
    ("Text me the bitcoin price every time I ask.", [COIN_PRICE, SMS]),
    ("Email Omar the Linear issues assigned to him.", [LINEAR_ISSUES, EMAIL]),
    ("Message +44 7700 900555 on WhatsApp my latest Strava run.", [STRAVA_ACTS, WHATSAPP]),
])
