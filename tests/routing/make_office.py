# Writes etom-office.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (seventeenth
# round), committed before it was measured: short requests of two needs as people type them to an
# assistant, whose result goes into a document, a sheet, a chart, a slide, a note or a message,
# mostly without "and then" ("… into an Excel sheet", "… as a PDF report", "Bar chart of …",
# "Weather at JFK tomorrow — text it to …").
from set_writer import named, write
from catalog_groups import (
    AIRPORT_WEATHER, AREA_CHART, ARXIV_SEARCH, CRICKET_NEWS, CRYPTO_NEWS, DOCX_READ, EMAIL,
    EXCEL_WRITE, GITHUB_DEVS, GITHUB_FILE, JIRA_ISSUES, KOSPI_VOLUME, MINDMAP, NEW_DECK,
    OBSIDIAN_NEW, PAGE_MD, REDDIT_HOT, SAVE, SLIDE, SMS, TO_DOCX, TO_PDF, TWEET, WSB_TRENDING,
    WXM_NOW, YOUTUBE_MD,
)
YAHOO_NEWS = named("Yahoo Finance MCP Server/get_ticker_news", "MCP Yeoman Server/get_ticker_news")
BAR_CHART = named("MCP Server Chart/generate_bar_chart", "MCP Server Chart/generate_column_chart")
ARXIV_GET = named("ArXiv MCP Server/download_paper", "ArXiv MCP Server/read_paper")
PDF_TO_SHEET = named("PDF.co MCP/pdf_to_xlsx", "PDF.co MCP/pdf_to_xls")
FLIGHTS = named("Variflight MCP Server/searchFlightItineraries", "Variflight MCP Server/searchFlightsByDepArr")
OUTLOOK_EVENT = named("Outlook Calendar MCP Tool/create_event", "Outlook Meetings Scheduler MCP Server/create-event")
STOCK_HISTORY = named("Financial Modeling Prep MCP Server/get_historical_stock_prices", "Twelve Data MCP Server/GetTimeSeries")
SHEET_WRITE = named("MCP Google Sheets Server/sheets_update_values", "MCP Google Sheets Server/sheets_batch_update_values")
WP_POST = named("WordPress MCP/create-post")
HACKMD_NEW = named("HackMD MCP Server/create_note")
write("etom-office.jsonl", "office", [
    ("Put the latest NVIDIA headlines from Yahoo Finance into an Excel sheet.", [YAHOO_NEWS, EXCEL_WRITE]),
    ("Bar chart of Samsung Electronics' trading volume by investor type this month, please.",
     [KOSPI_VOLUME, BAR_CHART]),
    ("Summarize the three newest arXiv papers on diffusion models as a PDF report.", [ARXIV_SEARCH, TO_PDF]),
    ("I need a slide deck on this week's trending GitHub developers in Python.", [GITHUB_DEVS, NEW_DECK]),
    ("Weather at JFK airport tomorrow — text it to my wife at +1 555 0100.", [AIRPORT_WEATHER, SMS]),
    ("Turn the tables in /docs/q3-report.pdf into a spreadsheet and mail it to finance@acme.com.",
     [PDF_TO_SHEET, EMAIL]),
    ("Today's crypto news, boiled down to one tweet.", [CRYPTO_NEWS, TWEET]),
    ("Find the cheapest flight from Beijing to Shanghai next Friday and block the time in my Outlook "
     "calendar.", [FLIGHTS, OUTLOOK_EVENT]),
    ("Markdown notes from the YouTube talk https://www.youtube.com/watch?v=dQw4w9WgXcQ as a new "
     "Obsidian note.", [YOUTUBE_MD, OBSIDIAN_NEW]),
    ("Plot Tesla's 2024 closing prices as an area chart.", [STOCK_HISTORY, AREA_CHART]),
    ("Latest WeatherXM readings from the stations near Berlin into our Google Sheet.", [WXM_NOW, SHEET_WRITE]),
    ("Make a mind map of the key terms in contract.docx.", [DOCX_READ, MINDMAP]),
    ("Publish the README of octo/widgets on GitHub as a WordPress post.", [GITHUB_FILE, WP_POST]),
    ("Tweet the top cricket headline of the day.", [CRICKET_NEWS, TWEET]),
    ("Grab arXiv paper 2401.01234 and give it to me as a Word document.", [ARXIV_GET, TO_DOCX]),
    ("Every open Jira bug in project WEB on one PowerPoint slide.", [JIRA_ISSUES, SLIDE]),
    ("What's hot on r/MachineLearning today? Email me the top five threads at me@example.com.",
     [REDDIT_HOT, EMAIL]),
    ("Save the WallStreetBets trending tickers to tickers.csv.", [WSB_TRENDING, SAVE]),
    ("Clip https://docs.pinecone.io/guides/hybrid-search as markdown into a HackMD note.", [PAGE_MD, HACKMD_NEW]),
    ("Pull Samsung's trading volume by investor type and email the numbers to ir@example.com.",
     [KOSPI_VOLUME, EMAIL]),
])
