# Writes etom-action-lists.jsonl (tests/routing/README.md) from the requests below, checking that
# every tool named exists in the ETOM catalog given as the first argument. Written 2026-11-27
# after the eighth round's comma rule and before measuring it on these requests: each request
# lists three actions, most with commas, over one or two servers, in a user's own words.
import json
import os
from catalog_groups import t, one, SAVE, EMAIL, SMS
AX="ArXiv MCP Server"; LN="Linear MCP Server"; TD="Enhanced Todoist MCP Server Extended"
TR="MCP Server Trello"; KG="Knowledge Graph Memory Server"; TM="MCP Teams Server"
HK="heroku-mcp-server"; VF="Variflight MCP Server"; DD="Datadog MCP Server"; PP="powerpoint MCP server"
DC="MCP-Discord"; RD="Redis MCP Server"
TODO_ADD=[t(TD,"todoist_create_task"),t(TD,"todoist_quick_add_task")]
Q=[
 ("Search arXiv for papers on speculative decoding, download the most cited one, and read its conclusion section.",
  [one(AX,"search_papers"),one(AX,"download_paper"),one(AX,"read_paper")]),
 ("List the Linear issues in the Mobile project, update the oldest one to high priority, and create a follow-up issue for the crash on login.",
  [one(LN,"list_issues"),one(LN,"update_issue"),one(LN,"create_issue")]),
 ("Get my Todoist tasks for today, complete the one about groceries, and add a new task to call the plumber.",
  [one(TD,"todoist_get_tasks"),one(TD,"todoist_complete_task"),TODO_ADD]),
 ("Show the lists on my Trello board, add a card called 'Write release notes' to the Doing list, and archive the card 'Old mockups'.",
  [one(TR,"get_lists"),one(TR,"add_card_to_list"),one(TR,"archive_card")]),
 ("Read the whole knowledge graph, add an observation that Dana moved to Berlin, and delete the entity 'Old Project'.",
  [one(KG,"read_graph"),one(KG,"add_observations"),one(KG,"delete_entities")]),
 ("List the threads in our Teams channel, read the one about the outage, and start a new thread with the postmortem.",
  [one(TM,"list_threads"),one(TM,"read_thread"),one(TM,"start_thread")]),
 ("Create a Heroku app called demo-shop, rename it to shop-demo, and show me its logs.",
  [one(HK,"create_app"),one(HK,"rename_app"),one(HK,"get_app_logs")]),
 ("Find flights from PVG to PEK on Monday, check the weather forecast at Beijing airport, and email the options to travel@example.com.",
  [one(VF,"searchFlightsByDepArr"),one(VF,"getFutureWeatherByAirport"),EMAIL]),
 ("Fetch the Datadog monitors for the API, pull the events from the last hour, and save a summary to ~/incidents/api.md.",
  [one(DD,"get-monitors"),one(DD,"get-events"),SAVE]),
 ("Create a PowerPoint called 'Q3 Review', add a section header for Sales, and add a comparison slide of Q2 and Q3.",
  [one(PP,"create-presentation"),one(PP,"add-slide-section-header"),one(PP,"add-slide-comparison")]),
 ("Get the latest tweets on my timeline, post a tweet announcing the launch, and send a WhatsApp message to the team about it.",
  [one("X (Twitter) MCP server","get_timeline"),one("X (Twitter) MCP server","post_tweet"),one("WhatsApp MCP Server","send_message")]),
 ("Look up the forum channels on our Discord server, create a forum post for the beta feedback, and reply to the thread about pricing.",
  [one(DC,"discord_get_forum_channels"),one(DC,"discord_create_forum_post"),one(DC,"discord_reply_to_forum")]),
 ("Search the knowledge graph for Alice, open the nodes for her projects, and remove the observation that she works remotely.",
  [one(KG,"search_nodes"),one(KG,"open_nodes"),one(KG,"delete_observations")]),
 ("Get the Linear issue ENG-42, write its description into /tmp/eng-42.md, and text the link to +1 555 0199.",
  [one(LN,"get_issue"),SAVE,SMS]),
 ("List all Heroku add-ons of the billing app, get details on the Postgres add-on, and email the plan to finance@example.com.",
  [one(HK,"list_addons"),one(HK,"get_addon_info"),EMAIL]),
 ("Set the Redis key 'feature:beta' to on, add user 42 to the set 'beta-users', and delete the key 'feature:alpha'.",
  [one(RD,"set"),one(RD,"sadd"),one(RD,"del")]),
 ("If the Datadog dashboard for checkout shows errors, get the logs aggregated by service, and create a Linear issue for the team.",
  [one(DD,"get-dashboard"),one(DD,"aggregate-logs"),one(LN,"create_issue")]),
 ("Find the member named Priya in Teams, start a thread mentioning her, and add a Todoist task to follow up with her on Friday.",
  [one(TM,"get_member_by_name"),one(TM,"start_thread"),TODO_ADD]),
 ("Get my Trello cards in the Review list, update the card 'Landing page' with a due date of Friday, and post a summary in our Discord forum.",
  [one(TR,"get_cards_by_list_id"),one(TR,"update_card_details"),one(DC,"discord_create_forum_post")]),
 ("Grab the arXiv paper 2401.01234, read it, and jot the key findings into a new HackMD note.",
  [one(AX,"download_paper"),one(AX,"read_paper"),one("HackMD MCP Server","create_note")]),
 ("Show all the Datadog dashboards, open the one for payments, and list the metrics it uses.",
  [one(DD,"get-dashboards"),one(DD,"get-dashboard"),one(DD,"get-metrics")]),
 ("Search my Obsidian vault for notes about onboarding, read the newest one, and turn it into a PowerPoint deck.",
  [one("Obsidian MCP Server","search_vault"),one("Obsidian MCP Server","get_note_content"),one(PP,"create-presentation")]),
 ("Check the transfer options from Shanghai to Chengdu, look up purchasable itineraries for the return, and save both to ~/trips/chengdu.md.",
  [one(VF,"getFlightTransferInfo"),one(VF,"searchFlightItineraries"),SAVE]),
 ("Find my Todoist tasks labelled 'urgent', move their due dates to tomorrow, and delete the task 'old backlog cleanup'.",
  [one(TD,"todoist_get_tasks"),one(TD,"todoist_update_task"),one(TD,"todoist_delete_task")]),
]
here=os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here,"etom-action-lists.jsonl"),"w") as out:
    for i,(q,groups) in enumerate(Q,1):
        out.write(json.dumps({"id":f"AL-{i:03d}","query":q,"relevant":[g[0] for g in groups],"relevant_groups":groups})+"\n")
print("etom-action-lists.jsonl",len(Q))
