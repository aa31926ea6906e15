# Writes etom-named.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (fourteenth
# round) after the rule for a step that names its upstream was built on ETOM's level-4 requests, and
# committed before it was measured: requests of several steps, each step naming the product it
# acts on, whose other words could fit another product's tools.
from catalog_groups import TODOIST_ADD
from set_writer import named, write
OURA_SLEEP = named("Oura MCP Server/get_sleep_data")
XERO_INVOICES = named("Xero MCP Server/list-invoices")
DISCORD_POST = named("MCP-Discord/discord_create_forum_post")
CLICKHOUSE_QUERY = named("ClickHouse MCP Server/run_select_query")
POSTHOG_NOTE = named("PostHog MCP Server/create_posthog_annotation")
YNAB_TRANSACTIONS = named("YNAB MCP Server/list-transactions", "YNAB MCP Server/list-monthly-transactions")
SHAREPOINT_UPLOAD = named("SharePoint MCP Server/Upload_Document", "SharePoint MCP Server/Upload_Document_From_Path")
STRAVA_ACTIVITY = named("Strava MCP Server/get_user_activities", "Strava MCP Server/get_activity")
REDIS_ZADD = named("Redis MCP Server/zadd")
CONFLUENCE_SEARCH = named("Confluence Communication Server MCP Server/execute_cql_search")
LINEAR_CREATE = named("Linear MCP Server/create_issue")
LINEAR_PROJECTS = named("Linear MCP Server/list_projects")
SHOPIFY_PRODUCTS = named("Shopify MCP Server/get-products")
MEILI_ADD = named("Meilisearch MCP Server/add-documents")
TELEGRAM_MESSAGES = named("Telegram MCP server/ListMessages")
TRELLO_CARD = named("MCP Server Trello/add_card_to_list")
DATADOG_MONITORS = named("Datadog MCP Server/get-monitors")
ZOOM_SEARCH = named("Zoom Transcript MCP Server/search_transcripts")
ELASTIC_BULK = named("Elasticsearch MCP Server/bulk")
WEBEX_ROOM = named("Webex MCP Server/get_room_details")
Q = [
    ("Get my sleep data for last week from Oura, then add a task to Todoist to go to bed earlier",
     [OURA_SLEEP, TODOIST_ADD]),
    ("Find the unpaid invoices in Xero and post a reminder about them in our Discord forum",
     [XERO_INVOICES, DISCORD_POST]),
    ("Run a query on ClickHouse for yesterday's signups, then create a PostHog annotation for the spike",
     [CLICKHOUSE_QUERY, POSTHOG_NOTE]),
    ("Pull this month's transactions from YNAB and upload the CSV of them to SharePoint",
     [YNAB_TRANSACTIONS, SHAREPOINT_UPLOAD]),
    ("Get my latest Strava activity, then add its distance to the Redis sorted set of weekly runs",
     [STRAVA_ACTIVITY, REDIS_ZADD]),
    ("Search the Confluence wiki for the on-call runbook and create a Linear issue to update it",
     [CONFLUENCE_SEARCH, LINEAR_CREATE]),
    ("List the products in our Shopify store and index them in Meilisearch",
     [SHOPIFY_PRODUCTS, MEILI_ADD]),
    ("Read the latest messages in my Telegram dialogs, then put the action items on a Trello card",
     [TELEGRAM_MESSAGES, TRELLO_CARD]),
    ("Get the Datadog monitors that are alerting and open a Linear issue for each",
     [DATADOG_MONITORS, LINEAR_CREATE]),
    ("Search my Zoom transcripts for 'pricing' and write the quotes into an Elasticsearch index",
     [ZOOM_SEARCH, ELASTIC_BULK]),
    ("Fetch the Webex room details for the design sync, then list the Linear projects it mentions",
     [WEBEX_ROOM, LINEAR_PROJECTS]),
    ("Check how I slept last night on Oura and put a card for a nap on the Trello board",
     [OURA_SLEEP, TRELLO_CARD]),
]
write("etom-named.jsonl", "NU", Q)
