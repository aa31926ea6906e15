# Writes etom-made-first-2.jsonl (tests/routing/README.md) from the requests below, checking that
# every tool named exists in the ETOM catalog given as the first argument. Written 2026-11-29
# (eighteenth round) after the rule for a thing to make named first was built on
# etom-made-first.jsonl, and committed before it was measured; never built on: the same shape in
# other words, openers, sources and things to make, and some whose source is written in lowercase.
from set_writer import named, write
from catalog_groups import (
    ARXIV_SEARCH, LINEAR_ISSUES, MINDMAP, NEW_DECK, NOTE_MAKE, TODOIST_TASKS, TO_DOCX, TO_PDF,
    TRELLO_CARD,
)
CHARTS = named("MCP Server Chart/generate_area_chart", "MCP Server Chart/generate_bar_chart",
               "MCP Server Chart/generate_column_chart")
CRYPTO_HISTORY = named("Alchemy MCP Server/fetchTokenPriceHistoryBySymbol",
                       "Alchemy MCP Server/fetchTokenPriceHistoryByTimeFrame",
                       "Binance Cryptocurrency MCP/get_ui_klines", "Token Metrics MCP Server/get_tokens_daily_ohlcv")
ARGO_APP = named("Argo CD MCP Server/get_application", "Argo CD MCP Server/list_applications")
OURA_SLEEP = named("Oura MCP Server/get_today_sleep_data", "Oura MCP Server/get_sleep_data")
BEAR_NEW = named("Bear MCP Server/create_note")
CONFLUENCE_PAGE = named("Confluence Communication Server MCP Server/get_page_content",
                        "Confluence Communication Server MCP Server/execute_cql_search")
SHEET_WRITE = named("Excel MCP Server/excel_write_to_sheet", "Excel MCP Server musa/write_data_to_excel",
                    "MCP Google Sheets Server/sheets_update_values", "MCP Google Sheets Server/sheets_batch_update_values")
OBSIDIAN_NOTE = named("Obsidian Local REST API MCP Server/get_note", "Obsidian MCP Server/get_note_content",
                      "Obsidian Local REST API MCP Server/get_file")
HACKMD_NEW = named("HackMD MCP Server/create_note", "HackMD MCP Server/create_team_note")
YAHOO_ETFS = named("Yahoo Finance MCP Server/get_top_etfs")
DATADOG_MONITORS = named("Datadog MCP Server/get-monitors")
CLOCKIFY_ENTRIES = named("Clockify MCP Server/getTimeEntries", "Clockify MCP Server/getSummaryReport",
                         "Clockify MCP Server/getUserTimeEntries")
write("etom-made-first-2.jsonl", "made-first-2", [
    ("Can you make a chart of Bitcoin's price over the last 30 days?", [CRYPTO_HISTORY, CHARTS]),
    ("Create a Trello card for the Argo CD app payments-api that is out of sync.", [ARGO_APP, TRELLO_CARD]),
    ("Write a Bear note about my Oura sleep score from last night.", [OURA_SLEEP, BEAR_NEW]),
    ("Build a slide deck from the Confluence page on our Q3 roadmap.", [CONFLUENCE_PAGE, NEW_DECK]),
    ("Make a spreadsheet of every Linear issue assigned to me.", [LINEAR_ISSUES, SHEET_WRITE]),
    ("I want a mind map of the ideas in my Obsidian note Startup Ideas.", [OBSIDIAN_NOTE, MINDMAP]),
    ("Prepare a Word document listing this week's Todoist tasks.", [TODOIST_TASKS, TO_DOCX]),
    ("Create a HackMD note with the abstracts of the five newest arXiv papers on RAG.", [ARXIV_SEARCH, HACKMD_NEW]),
    ("Make a column chart of the top technology ETFs on Yahoo Finance.", [YAHOO_ETFS, CHARTS]),
    ("Give me a PDF of the Datadog monitors that are alerting right now.", [DATADOG_MONITORS, TO_PDF]),
    ("Make a bar chart of the hours I logged in clockify this week.", [CLOCKIFY_ENTRIES, CHARTS]),
    ("Write a note about the bitcoin price history of the past week.", [CRYPTO_HISTORY, NOTE_MAKE]),
])
