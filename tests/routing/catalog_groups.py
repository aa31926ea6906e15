# The groups of interchangeable tools of the ETOM catalog that more than one of our routing sets
# uses (every catalog tool that does the step), shared by their generators (README.md).
from set_writer import named, t
def one(s,n): return [t(s,n)]
# Every tool that writes given content into a file at a path (read from every description that
# pairs writing, saving or creating with a file and its content; multi-purpose editors and tools
# that fetch what they save are not in it).
SAVE=[t("Terminal Controller for MCP","write_file"),t("Model Context Protocol TypeScript Implementation","write"),t("Obsidian Local REST API MCP Server","create_file"),t("Filesystem MCP Server","write_content"),t("mcp-editor","create"),t("Coding Assistant Server","create_text_file")]
EMAIL=[t(s,n) for s,n in [("Google MCP Tools","google_gmail_send_email"),("Google Workspace MCP Server","send_email"),("Hiworks Mail MCP","send_email"),("MailPace MCP (Model Context Protocol) Server","send-email"),("MCP Mailtrap Server","send-email"),("mcp-email-server","send_email"),("MCP Headless Gmail Server","gmail_send_email"),("blastengine-mailer MCP Server","send_email")]]
SMS=[t("ClickSend MCP Server","send_sms"),t("Mac Messages MCP","tool_send_message")]
# Every tool of the general to-do servers (Todoist, the Todo List server, DeltaTask) that adds a
# to-do (Todoist's quick add takes reminders).
TODO_ADD=[t(s,n) for s,n in [("Enhanced Todoist MCP Server Extended","todoist_create_task"),("Enhanced Todoist MCP Server Extended","todoist_quick_add_task"),("Todo List MCP Server","create-todo"),("DeltaTask - Advanced Task Management System","create_task")]]
# Every tool of the catalog's note apps that makes a note (HackMD, NotePlan, Bear, Obsidian, Basic
# Memory's write_note), and every one that finds or reads a note by its words or title.
NOTE_MAKE=[t(s,n) for s,n in [("HackMD MCP Server","create_note"),("NotePlan MCP Server","create_note"),("Bear MCP Server","create_note"),("Obsidian Local REST API MCP Server","create_note"),("Basic Memory","write_note")]]
NOTE_FIND=[t(s,n) for s,n in [("NotePlan MCP Server","search_notes"),("NotePlan MCP Server","get_notes"),("Obsidian MCP Server","search_vault"),("Obsidian MCP Server","get_note_content"),("Obsidian Local REST API MCP Server","get_note"),("Obsidian Local REST API MCP Server","list_notes"),("Bear MCP Server","get_note"),("HackMD MCP Server","get_note"),("Basic Memory","search"),("Basic Memory","read_note")]]
# The named note apps' tools that find or read a note.
OBSIDIAN_FIND=[t(s,n) for s,n in [("Obsidian MCP Server","search_vault"),("Obsidian MCP Server","get_note_content"),("Obsidian Local REST API MCP Server","get_note"),("Obsidian Local REST API MCP Server","list_notes")]]
# Every tool of the catalog's seven memory servers that adds, searches or deletes a memory.
MEMORY_ADD=[t(s,n) for s,n in [("mem0 Memory System","add_memory"),("Letta MCP Server","create_memory_block"),("mcp-memory-libsql","create_entities"),("Knowledge Graph Memory Server","add_observations"),("Memory Box MCP Server","save_memory")]]
MEMORY_SEARCH=[t(s,n) for s,n in [("mem0 Memory System","search_memory"),("mcp-memory-libsql","search_nodes"),("Knowledge Graph Memory Server","search_nodes"),("Knowledge Graph Memory Server","open_nodes"),("Memory Box MCP Server","search_memories"),("Basic Memory","search"),("cognee MCP server","search")]]
MEMORY_DELETE=[t(s,n) for s,n in [("mem0 Memory System","delete_memory"),("mcp-memory-libsql","delete_entity"),("Knowledge Graph Memory Server","delete_entities"),("Knowledge Graph Memory Server","delete_observations"),("Basic Memory","delete_note")]]
# Every tool of the catalog's local file servers that lists a folder, moves or renames, copies,
# deletes, or tells a file's size and times (read from the descriptions): the file sets' groups.
FILE_LIST=[t(s,n) for s,n in [("Model Context Protocol TypeScript Implementation","ls"),("Filesystem MCP Server","list_files"),("DAV MCP Server","list_my_files_and_folders"),("Coding Assistant Server","list_dir"),("mcp-editor","view")]]
FILE_MOVE=[t("Filesystem MCP Server","move_items"),t("Model Context Protocol TypeScript Implementation","rename")]
FILE_COPY=[t("Filesystem MCP Server","copy_items")]
FILE_DELETE=[t("Model Context Protocol TypeScript Implementation","delete"),t("MCP-Delete","delete_file")]
FILE_STAT=[t("Filesystem MCP Server","stat_items"),t("DAV MCP Server","get_file_or_folder_details")]

# Tools that more than one of the sets of short requests whose result is made or sent (office,
# made-first, sent-first) names: one need each, written "server/name".
AIRPORT_WEATHER = named("Variflight MCP Server/getFutureWeatherByAirport")
AREA_CHART = named("MCP Server Chart/generate_area_chart")
ARXIV_SEARCH = named("ArXiv MCP Server/search_papers")
CRICKET_LIVE = named("Cricket MCP Server/get_live_matches")
CRICKET_NEWS = named("Cricket MCP Server/get_cricket_news")
CRYPTO_NEWS = named("Crypto News MCP Server/read_news")
DOCX_READ = named("Markdownify MCP Server - UTF-8 Enhanced/docx-to-markdown", "mcp-pandoc: A Document Conversion MCP Server/convert-contents")
EXCEL_WRITE = named("Excel MCP Server/excel_write_to_sheet", "Excel MCP Server musa/write_data_to_excel")
GITHUB_DEVS = named("mcp-github-trending MCP Server/get_github_trending_developers")
GITHUB_FILE = named("GitHub Repository MCP Server/get-file-content", "GitHub MCP Server for Pera1/github_get_code")
JIRA_ISSUES = named("Jira communication server MCP Server/execute_jql",
                    "Jira communication server MCP Server/get_only_ticket_name_and_description",
                    "MCP Atlassian/jira_get_project_issues")
KOSPI_VOLUME = named("kospi-kosdaq-stock-server/get_stock_trading_volume")
LINEAR_ISSUES = named("Linear MCP Server/list_issues", "Linear MCP Server/search_issues")
MINDMAP = named("Markmap MCP Server/markdown_to_mindmap")
NEW_DECK = named("powerpoint MCP server/create-presentation")
OBSIDIAN_NEW = named("Obsidian Local REST API MCP Server/create_note", "Obsidian Local REST API MCP Server/create_file")
PAGE_MD = named("MCP Access Template/get-webpage-markdown", "ReviewWebsite.com - MCP Server/convert_to_markdown",
                "ReviewWebsite.com - MCP Server/scrape_url", "ScrapeGraph MCP Server/markdownify",
                "Fetcher MCP/fetch_url", "Fetch MCP Server/fetch", "pure.md MCP server/unblock-url",
                "Markdown Downloader MCP Server/download_markdown", "mcp-server-fetch-python/get-markdown")
REDDIT_HOT = named("MCP Reddit Server/fetch_reddit_hot_threads", "Reddit MCP/search_posts")
SLIDE = named("powerpoint MCP server/create-presentation", "powerpoint MCP server/add-slide-title-only",
              "powerpoint MCP server/add-slide-section-header", "powerpoint MCP server/add-slide-comparison")
TODOIST_ADD = named("Enhanced Todoist MCP Server Extended/todoist_create_task",
                    "Enhanced Todoist MCP Server Extended/todoist_quick_add_task")
TODOIST_TASKS = named("Enhanced Todoist MCP Server Extended/todoist_get_tasks")
TO_DOCX = named("mcp-pandoc: A Document Conversion MCP Server/convert-contents")
TO_PDF = named("markdown2pdf-mcp/markdown2pdf", "mcp-pandoc: A Document Conversion MCP Server/convert-contents")
TRELLO_CARD = named("MCP Server Trello/add_card_to_list")
TWEET = named("X (Twitter) MCP server/post_tweet")
WHATSAPP = named("WhatsApp MCP Server/send_message")
WSB_TRENDING = named("WSB Analyst MCP Server/get_top_trending_tickers")
WXM_NOW = named("WeatherXM PRO MCP Server/get_stations_near", "WeatherXM PRO MCP Server/get_latest_observation")
YOUTUBE_MD = named("Markdownify MCP Server - UTF-8 Enhanced/youtube-to-markdown")
ZOOM_ACTIONS = named("Zoom Transcript MCP Server/extract_action_items")
