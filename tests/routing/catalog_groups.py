# The groups of interchangeable tools of the ETOM catalog that more than one of our routing sets
# uses (every catalog tool that does the step), shared by their generators (README.md).
from set_writer import t
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
