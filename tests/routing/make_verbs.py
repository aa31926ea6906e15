# Writes etom-verbs.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (sixteenth
# round), committed before it was measured: requests of two steps whose second step acts in an
# everyday verb the action lexicon does not hold ("file a Linear issue", "log … in our Google
# Sheet", "push … to our team webhook", "spin up … and shut it down").
from set_writer import named, write
from catalog_groups import EMAIL, EXCEL_WRITE, WHATSAPP
DATADOG_MONITORS = named("Datadog MCP Server/get-monitors")
DATADOG_EVENTS = named("Datadog MCP Server/get-events")
LINEAR_CREATE = named("Linear MCP Server/create_issue")
LINEAR_MINE = named("Linear MCP Server/list_issues", "Linear MCP Server/search_issues")
ROOTLY_SEARCH = named("Rootly MCP Server/search_incidents_paginated",
                      "Rootly MCP Server/get_all_incidents_matching")
PLANE_CREATE = named("Plane MCP Server/create_issue")
ZOOM_SEARCH = named("Zoom Transcript MCP Server/search_transcripts")
GOOGLE_SHEET_WRITE = named("MCP Google Sheets Server/sheets_update_values",
                           "MCP Google Sheets Server/sheets_batch_update_values")
SHOPIFY_PRODUCTS = named("Shopify MCP Server/get-products")
WEBHOOK = named("MCP Webhook Server/send_message")
OURA_READINESS = named("Oura MCP Server/get_today_readiness_data", "Oura MCP Server/get_readiness_data")
S3_LIST = named("S3 MCP Server/list-objects")
REDIS_SADD = named("Redis MCP Server/sadd")
BITCOIN_PRICE = named("Coincap MCP/bitcoin_price", "Coincap MCP/get_crypto_price")
NOVITA_CREATE = named("Novita MCP Server/create-gpu-instance")
NOVITA_STOP = named("Novita MCP Server/stop-gpu-instance")
NOVITA_LIST = named("Novita MCP Server/list-gpu-instances")
NOVITA_START = named("Novita MCP Server/start-gpu-instance")
TEMBO_CREATE = named("Salesforce MCP Server/create_instance")
TRELLO_CARD = named("MCP Server Trello/add_card_to_list")
TRELLO_ARCHIVE = named("MCP Server Trello/archive_card")
JIRA_ISSUES = named("MCP Atlassian/jira_get_project_issues",
                    "Jira communication server MCP Server/execute_jql")
ARXIV_SEARCH = named("ArXiv MCP Server/search_papers")
HACKMD_NOTE = named("HackMD MCP Server/create_note")
TRENDING_DEVS = named("mcp-github-trending MCP Server/get_github_trending_developers")
AITABLE_RECORD = named("AITable MCP Server/create_record")
CLICKHOUSE_QUERY = named("ClickHouse MCP Server/run_select_query")
CLICKHOUSE_TABLES = named("ClickHouse MCP Server/list_tables")
XERO_INVOICES = named("Xero MCP Server/list-invoices")
CHROMA_ADD = named("Chroma MCP Server/chroma_add_documents")
PINECONE_STATS = named("Pinecone Developer MCP Server/describe-index-stats")
BEAR_NOTE = named("Bear MCP Server/create_note")
POSTHOG_PROJECTS = named("PostHog MCP Server/list_posthog_projects")
POSTHOG_NOTE = named("PostHog MCP Server/create_posthog_annotation")
Q = [
    ("Get the Datadog monitors that are alerting and file a Linear issue for the worst one",
     [DATADOG_MONITORS, LINEAR_CREATE]),
    ("Search Rootly for incidents about payments and open an issue in Plane to follow up",
     [ROOTLY_SEARCH, PLANE_CREATE]),
    ("Find the Zoom transcripts that mention churn and log the quotes in our Google Sheet",
     [ZOOM_SEARCH, GOOGLE_SHEET_WRITE]),
    ("Pull the Shopify products that are low on stock and push the list to our team webhook",
     [SHOPIFY_PRODUCTS, WEBHOOK]),
    ("Check my Oura readiness for today and drop a WhatsApp message to my coach at +15551234567",
     [OURA_READINESS, WHATSAPP]),
    ("List the objects in the S3 reports bucket and store their keys in a Redis set",
     [S3_LIST, REDIS_SADD]),
    ("Get the current bitcoin price from Coincap and write it into the prices sheet of budget.xlsx",
     [BITCOIN_PRICE, EXCEL_WRITE]),
    ("Spin up a GPU instance on Novita for the training run and shut it down afterwards",
     [NOVITA_CREATE, NOVITA_STOP]),
    ("Create a Tembo instance with 2 CPUs and fire off an email to ops@example.com when it's ready",
     [TEMBO_CREATE, EMAIL]),
    ("Look up the Linear issues assigned to me and stick them on a Trello card for the sprint",
     [LINEAR_MINE, TRELLO_CARD]),
    ("Grab the open issues of the WEB project in Jira and shoot a summary to the team on WhatsApp",
     [JIRA_ISSUES, WHATSAPP]),
    ("Search arXiv for papers on diffusion models and record the titles in a new HackMD note",
     [ARXIV_SEARCH, HACKMD_NOTE]),
    ("Fetch the trending GitHub developers this week and log them as records in AITable",
     [TRENDING_DEVS, AITABLE_RECORD]),
    ("Run a query on ClickHouse for today's failed payments and raise an issue in Linear about them",
     [CLICKHOUSE_QUERY, LINEAR_CREATE]),
    ("Get the Xero invoices that are overdue and ping the customer by email at billing@client.com",
     [XERO_INVOICES, EMAIL]),
    ("Find the Datadog events from last night and put them into a Chroma collection",
     [DATADOG_EVENTS, CHROMA_ADD]),
    ("List the Novita GPU instances and kick off the one that is stopped",
     [NOVITA_LIST, NOVITA_START]),
    ("Describe the Pinecone index stats and save them in a Bear note",
     [PINECONE_STATS, BEAR_NOTE]),
    ("List the ClickHouse tables and archive the Trello card about the old schema",
     [CLICKHOUSE_TABLES, TRELLO_ARCHIVE]),
    ("Find the PostHog projects and note today's release on the main one as an annotation",
     [POSTHOG_PROJECTS, POSTHOG_NOTE]),
]
write("etom-verbs.jsonl", "VB", Q)
