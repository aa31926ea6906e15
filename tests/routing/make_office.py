# Writes etom-office.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (seventeenth
# round), committed before it was measured: short requests of two needs as people type them to an
# assistant, whose result goes into a document, a sheet, a chart, a slide, a note or a message,
# mostly without "and then" ("… into an Excel sheet", "… as a PDF report", "Bar chart of …",
# "Weather at JFK tomorrow — text it to …").
from set_writer import named, write
from catalog_groups import EMAIL, SAVE, SMS
YAHOO_NEWS = named("Yahoo Finance MCP Server/get_ticker_news", "MCP Yeoman Server/get_ticker_news")
EXCEL_WRITE = named("Excel MCP Server/excel_write_to_sheet", "Excel MCP Server musa/write_data_to_excel")
KOSPI_VOLUME = named("kospi-kosdaq-stock-server/get_stock_trading_volume")
BAR_CHART = named("MCP Server Chart/generate_bar_chart", "MCP Server Chart/generate_column_chart")
AREA_CHART = named("MCP Server Chart/generate_area_chart")
ARXIV_SEARCH = named("ArXiv MCP Server/search_papers")
ARXIV_GET = named("ArXiv MCP Server/download_paper", "ArXiv MCP Server/read_paper")
TO_PDF = named("markdown2pdf-mcp/markdown2pdf", "mcp-pandoc: A Document Conversion MCP Server/convert-contents")
TO_DOCX = named("mcp-pandoc: A Document Conversion MCP Server/convert-contents")
GITHUB_DEVS = named("mcp-github-trending MCP Server/get_github_trending_developers")
NEW_DECK = named("powerpoint MCP server/create-presentation")
SLIDE = named("powerpoint MCP server/create-presentation", "powerpoint MCP server/add-slide-title-only",
              "powerpoint MCP server/add-slide-section-header", "powerpoint MCP server/add-slide-comparison")
AIRPORT_WEATHER = named("Variflight MCP Server/getFutureWeatherByAirport")
PDF_TO_SHEET = named("PDF.co MCP/pdf_to_xlsx", "PDF.co MCP/pdf_to_xls")
CRYPTO_NEWS = named("Crypto News MCP Server/read_news")
TWEET = named("X (Twitter) MCP server/post_tweet")
FLIGHTS = named("Variflight MCP Server/searchFlightItineraries", "Variflight MCP Server/searchFlightsByDepArr")
OUTLOOK_EVENT = named("Outlook Calendar MCP Tool/create_event", "Outlook Meetings Scheduler MCP Server/create-event")
YOUTUBE_MD = named("Markdownify MCP Server - UTF-8 Enhanced/youtube-to-markdown")
OBSIDIAN_NEW = named("Obsidian Local REST API MCP Server/create_note", "Obsidian Local REST API MCP Server/create_file")
STOCK_HISTORY = named("Financial Modeling Prep MCP Server/get_historical_stock_prices", "Twelve Data MCP Server/GetTimeSeries")
WXM_NOW = named("WeatherXM PRO MCP Server/get_stations_near", "WeatherXM PRO MCP Server/get_latest_observation")
SHEET_WRITE = named("MCP Google Sheets Server/sheets_update_values", "MCP Google Sheets Server/sheets_batch_update_values")
DOCX_READ = named("Markdownify MCP Server - UTF-8 Enhanced/docx-to-markdown", "mcp-pandoc: A Document Conversion MCP Server/convert-contents")
MINDMAP = named("Markmap MCP Server/markdown_to_mindmap")
GITHUB_FILE = named("GitHub Repository MCP Server/get-file-content", "GitHub MCP Server for Pera1/github_get_code")
WP_POST = named("WordPress MCP/create-post")
CRICKET_NEWS = named("Cricket MCP Server/get_cricket_news")
JIRA_ISSUES = named("Jira communication server MCP Server/execute_jql",
                    "Jira communication server MCP Server/get_only_ticket_name_and_description",
                    "MCP Atlassian/jira_get_project_issues")
REDDIT_HOT = named("MCP Reddit Server/fetch_reddit_hot_threads", "Reddit MCP/search_posts")
WSB_TRENDING = named("WSB Analyst MCP Server/get_top_trending_tickers")
PAGE_MD = named("MCP Access Template/get-webpage-markdown", "ReviewWebsite.com - MCP Server/convert_to_markdown",
                "ReviewWebsite.com - MCP Server/scrape_url", "ScrapeGraph MCP Server/markdownify",
                "Fetcher MCP/fetch_url", "Fetch MCP Server/fetch", "pure.md MCP server/unblock-url",
                "Markdown Downloader MCP Server/download_markdown", "mcp-server-fetch-python/get-markdown")
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
