# Writes etom-made-first.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-29 (eighteenth
# round), committed before it was measured: requests of two needs that name the thing to make first
# and the content after it, from a named source, a file or a page ("Make a bar chart of my Strava
# activities this month", "Build a mind map from the README of octo/widgets on GitHub"), the order
# the seventeenth round left ("I need a slide deck on …", the issue's "Make a web page about …").
from set_writer import named, write
from catalog_groups import (
    AREA_CHART, CRICKET_LIVE, CRYPTO_NEWS, DOCX_READ, EXCEL_WRITE, GITHUB_FILE, JIRA_ISSUES,
    KOSPI_VOLUME, MINDMAP, NEW_DECK, OBSIDIAN_NEW, PAGE_MD, REDDIT_HOT, SAVE, SLIDE, TO_DOCX,
    TO_PDF, TRELLO_CARD, TWEET, WSB_TRENDING, YOUTUBE_MD, ZOOM_ACTIONS,
)
STRAVA_ACTS = named("Strava MCP Server/get_user_activities")
CHART_BARS = named("MCP Server Chart/generate_bar_chart", "MCP Server Chart/generate_column_chart")
OURA_SLEEP = named("Oura MCP Server/get_sleep_data")
OURA_READINESS = named("Oura MCP Server/get_readiness_data")
HACKMD_NEW = named("HackMD MCP Server/create_note", "HackMD MCP Server/create_team_note")
YAHOO_TOP = named("Yahoo Finance MCP Server/get_top_companies")
ZOOM_TRANSCRIPT = named("Zoom Transcript MCP Server/get_recent_transcripts",
                        "Zoom Transcript MCP Server/download_transcript")
LINEAR_NEW = named("Linear MCP Server/create_issue")
STOCK_SERIES = named("Twelve Data MCP Server/GetTimeSeries")
SHEET_WRITE = named("MCP Google Sheets Server/sheets_update_values", "MCP Google Sheets Server/sheets_batch_update_values")
write("etom-made-first.jsonl", "made-first", [
    ("Make a bar chart of my Strava activities this month.", [STRAVA_ACTS, CHART_BARS]),
    ("Create a PowerPoint deck from the latest Crypto News headlines.", [CRYPTO_NEWS, NEW_DECK]),
    ("Draw an area chart of my Oura sleep data for the past two weeks.", [OURA_SLEEP, AREA_CHART]),
    ("Write a HackMD note summarizing the hot threads on r/rust.", [REDDIT_HOT, HACKMD_NEW]),
    ("Build a mind map from the README of octo/widgets on GitHub.", [GITHUB_FILE, MINDMAP]),
    ("Create a PDF report on the WallStreetBets trending tickers.", [WSB_TRENDING, TO_PDF]),
    ("Make an Excel sheet with today's live cricket matches.", [CRICKET_LIVE, EXCEL_WRITE]),
    ("Create a slide listing the top technology companies from Yahoo Finance.", [YAHOO_TOP, SLIDE]),
    ("Open a Linear issue for each action item from my latest Zoom meeting.", [ZOOM_ACTIONS, LINEAR_NEW]),
    ("Make a Trello card for every open Jira bug in project WEB.", [JIRA_ISSUES, TRELLO_CARD]),
    ("Draft a tweet about the top story in today's crypto news.", [CRYPTO_NEWS, TWEET]),
    ("Create a Google Sheet of the daily AAPL prices this year from Twelve Data.", [STOCK_SERIES, SHEET_WRITE]),
    ("Make a web page about hybrid search from https://docs.pinecone.io/guides/hybrid-search, saved at "
     "/srv/www/hybrid.html.", [PAGE_MD, SAVE]),
    ("Write a Word document from the transcript of my last Zoom meeting.", [ZOOM_TRANSCRIPT, TO_DOCX]),
    ("Make a column chart of Samsung Electronics' trading volume by investor type.", [KOSPI_VOLUME, CHART_BARS]),
    ("Create a new Obsidian note with the markdown of the YouTube talk https://youtu.be/abc123.",
     [YOUTUBE_MD, OBSIDIAN_NEW]),
    ("Generate a mind map of the key points in /home/me/notes/meeting.docx.", [DOCX_READ, MINDMAP]),
    ("Prepare a PDF of my Oura readiness scores for last week.", [OURA_READINESS, TO_PDF]),
])
