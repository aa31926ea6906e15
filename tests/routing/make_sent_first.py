# Writes etom-sent-first.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-29 (eighteenth
# round), committed before it was measured: requests of two needs that open with sending (email,
# text, tweet, post, message) and name what to send after it, from a named source, a file or a
# page ("Email me the top five hot threads on r/MachineLearning at …", "Tweet this week's top
# trending GitHub developer"), the order of the round's made-first set with a message for a thing.
from set_writer import named, write
from catalog_groups import (
    AIRPORT_WEATHER, CRICKET_LIVE, CRYPTO_NEWS, EMAIL, GITHUB_DEVS, JIRA_ISSUES, KOSPI_VOLUME,
    PAGE_MD, REDDIT_HOT, SMS, TWEET, WHATSAPP, WSB_TRENDING, WXM_NOW,
)
YAHOO_NEWS = named("Yahoo Finance MCP Server/get_ticker_news", "MCP Yeoman Server/get_ticker_news",
                   "Yahoo Finance MCP Server/search_news")
TEAMS_THREAD = named("MCP Teams Server/start_thread")
OURA_TODAY = named("Oura MCP Server/get_today_readiness_data", "Oura MCP Server/get_readiness_data")
ARXIV_GET = named("ArXiv MCP Server/read_paper", "ArXiv MCP Server/download_paper")
STRAVA_ACTS = named("Strava MCP Server/get_user_activities", "Strava MCP Server/get_activity")
DISCORD_REPLY = named("MCP-Discord/discord_reply_to_forum")
COIN_PRICE = named("CoinStats MCP Server/get-coin-by-id", "CoinStats MCP Server/get-coins")
write("etom-sent-first.jsonl", "sent-first", [
    ("Email me the top five hot threads on r/MachineLearning at me@example.com.", [REDDIT_HOT, EMAIL]),
    ("Text my wife at +1 555 0100 the weather forecast for JFK airport tomorrow.", [AIRPORT_WEATHER, SMS]),
    ("WhatsApp +44 7700 900123 the latest Crypto News headline.", [CRYPTO_NEWS, WHATSAPP]),
    ("Send dev@acme.com every open Jira bug in project WEB.", [JIRA_ISSUES, EMAIL]),
    ("Tweet this week's top trending GitHub developer.", [GITHUB_DEVS, TWEET]),
    ("Post the Yahoo Finance headlines about NVIDIA in a new Teams thread.", [YAHOO_NEWS, TEAMS_THREAD]),
    ("Mail ir@example.com Samsung Electronics' trading volume by investor type.", [KOSPI_VOLUME, EMAIL]),
    ("Message Dana on WhatsApp my Oura readiness score for today.", [OURA_TODAY, WHATSAPP]),
    ("Email bob@example.com the abstract of arXiv paper 2401.01234.", [ARXIV_GET, EMAIL]),
    ("SMS +1 555 0199 the live cricket scores.", [CRICKET_LIVE, SMS]),
    ("Share my latest Strava ride with the team in a new Teams thread.", [STRAVA_ACTS, TEAMS_THREAD]),
    ("Reply to Discord forum thread 123 with the WallStreetBets trending tickers.", [WSB_TRENDING, DISCORD_REPLY]),
    ("Tweet the current Bitcoin price from CoinStats.", [COIN_PRICE, TWEET]),
    ("Send me by email the WeatherXM readings from the stations near Berlin, me@example.com.", [WXM_NOW, EMAIL]),
    ("Email the markdown of https://docs.pinecone.io/guides/hybrid-search to me@example.com.", [PAGE_MD, EMAIL]),
    ("Text +1 555 0142 the hottest post on r/wallstreetbets right now.", [REDDIT_HOT, SMS]),
])
