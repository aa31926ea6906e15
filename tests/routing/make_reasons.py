# Writes etom-reasons.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-29
# (nineteenth round) after the reading of a stated reason and of a file's metadata by its fields
# were built on ETOM level 4's misses, and committed before it was measured; never built on:
# steps that give their reason ("so I can …", "so that …", "to help me decide …", "to
# understand …", "for future reference"), and asks for a file's size and time of change.
from set_writer import named, write
from catalog_groups import (
    AIRPORT_WEATHER, AREA_CHART, ARXIV_SEARCH, CRYPTO_NEWS, EMAIL, GITHUB_FILE, JIRA_ISSUES,
    KOSPI_VOLUME, OBSIDIAN_NEW, SAVE, SMS, TODOIST_ADD, TO_PDF, TRELLO_CARD, TWEET, WSB_TRENDING,
    ZOOM_ACTIONS,
)
STAT = named("Filesystem MCP Server/stat_items")
# Listing a folder with each entry's details: the file server's listing takes an option for them.
STAT_OR_LIST = named("Filesystem MCP Server/stat_items", "Filesystem MCP Server/list_files")
LIST = named("Filesystem MCP Server/list_files", "Coding Assistant Server/list_dir")
write("etom-reasons.jsonl", "reasons", [
    ("List the files in /srv/app/releases and then give me their sizes and modification times so I can spot the stale ones.", [LIST, STAT_OR_LIST]),
    ("Search arXiv for recent papers on retrieval-augmented generation so that I can cite them in my thesis, then save the list to ~/thesis/refs.md.", [ARXIV_SEARCH, SAVE]),
    ("Find the top trending tickers on WallStreetBets to help me decide what to research, and email them to me@example.com.", [WSB_TRENDING, EMAIL]),
    ("Get tomorrow's weather at JFK airport so I can plan my commute, then text it to +1 555 0100.", [AIRPORT_WEATHER, SMS]),
    ("Pull the open Jira issues of project WEB to understand the backlog, and create a Trello card summarizing them.", [JIRA_ISSUES, TRELLO_CARD]),
    ("Read the README of octo/widgets on GitHub to understand how to install it, then create a new Obsidian note with the install steps.", [GITHUB_FILE, OBSIDIAN_NEW]),
    ("Show me the KOSPI trading volume of Samsung Electronics this week to help me judge the momentum, and draw an area chart of it.", [KOSPI_VOLUME, AREA_CHART]),
    ("Tell me the size and last modification time of /var/backups/db.sql.gz.", [STAT]),
    ("Check the sizes and modified dates of everything in ~/Downloads so that I can clean it up.", [STAT_OR_LIST]),
    ("Get the latest crypto news to help me choose what to buy, then tweet the top headline.", [CRYPTO_NEWS, TWEET]),
    ("Extract the action items from my latest Zoom meeting and add each as a Todoist task for future reference.", [ZOOM_ACTIONS, TODOIST_ADD]),
    ("Convert meeting-notes.md to PDF so we can share it with the client, and email it to client@acme.com.", [TO_PDF, EMAIL]),
])
