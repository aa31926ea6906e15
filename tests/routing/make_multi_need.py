# Writes etom-multi-need.jsonl (tests/routing/README.md) from the requests below, checking that
# every tool named exists in the ETOM catalog given as the first argument.
import json
from catalog_groups import t, SAVE, EMAIL, SMS
PPT=[t("powerpoint MCP server","create-presentation")]
NOTE=[t(s,n) for s,n in [("HackMD MCP Server","create_note"),("NotePlan MCP Server","create_note"),("Bear MCP Server","create_note"),("Obsidian Local REST API MCP Server","create_note")]]
MAJ={
 "weather_airport":t("Variflight MCP Server","getFutureWeatherByAirport"),
 "cmc_quotes":t("Coinmarket MCP server","get_quotes"),
 "linear":t("Linear MCP Server","list_issues"),
 "arxiv":t("ArXiv MCP Server","search_papers"),
 "heroku":t("heroku-mcp-server","list_apps"),
 "todoist":t("Enhanced Todoist MCP Server Extended","todoist_get_tasks"),
 "flights":t("Variflight MCP Server","searchFlightsByDepArr"),
 "caldav":t("DAV MCP Server","get_calendar_events"),
 "datadog":t("Datadog MCP Server","get-metrics"),
 "ticker_news":t("MCP Yeoman Server","get_ticker_news"),
 "deepwiki":t("Deepwiki MCP Server","deepwiki_fetch"),
 "gtasks":t("Google MCP Tools","google_tasks_list_tasks"),
 "coindesk":t("Crypto News MCP Server","read_news"),
 "alchemy":t("Alchemy MCP Server","fetchTokenPriceBySymbol"),
 "weatherxm":t("WeatherXM PRO MCP Server","get_forecast_for_cell"),
 "appstore":t("App Store Connect MCP Server","list_apps"),
 "boldsign":t("BoldSign MCP Server","list_contacts"),
 "sentiment":t("Financial Modeling Prep MCP Server","get_news_sentiment"),
 "itineraries":t("Variflight MCP Server","searchFlightItineraries"),
 "clickup":t("ClickUp MCP Server","clickup_get_tasks"),
}
Q=[
 # (major, minor kind, query)
 ("weather_airport","file","Get the 3-day weather forecast for JFK airport and save it to /home/ana/trips/jfk-weather.md"),
 ("weather_airport","email","Check what the weather will be at Heathrow over the next three days, then email the forecast to ops@example.com"),
 ("weather_airport","ppt","Pull the airport weather forecast for SFO for the coming days and summarize it in a PowerPoint slide for the travel briefing"),
 ("cmc_quotes","file","Look up the current CoinMarketCap quote for Solana and write the numbers into ~/crypto/sol.txt"),
 ("cmc_quotes","email","Fetch the latest quotes for BTC and ETH from CoinMarketCap and send them by email to my accountant"),
 ("cmc_quotes","note","Get today's market quote for Cardano and keep it as a note in Bear"),
 ("linear","file","List the open Linear issues assigned to me and save the list to /tmp/my-issues.md"),
 ("linear","email","Show the Linear issues in the Platform team that are in progress, and email a summary to lead@example.com"),
 ("linear","note","Find my high-priority Linear issues and put them in a new HackMD note for the standup"),
 ("arxiv","file","Find recent arXiv papers on retrieval-augmented generation, saved at /data/reading/rag-papers.md"),
 ("arxiv","email","Search arXiv for 2025 papers about diffusion transformers and mail the titles to my advisor"),
 ("arxiv","ppt","Look up arXiv papers on graph neural networks for drug discovery and make a PowerPoint presentation of the top five"),
 ("heroku","file","List all my Heroku apps and write the names into deploy/apps.txt"),
 ("heroku","email","Show every Heroku application our team owns and send the list to devops@example.com by email"),
 ("heroku","note","Get the list of Heroku apps I collaborate on and create an Obsidian note with it"),
 ("todoist","file","Pull my Todoist tasks due this week and save them to ~/weekly/todo.md"),
 ("todoist","email","Get my overdue Todoist tasks and email them to me as a reminder"),
 ("todoist","note","Retrieve the Todoist tasks labelled 'errands' and add them to a NotePlan note for Saturday"),
 ("flights","file","Find flights from PEK to SHA tomorrow and store the results in /home/li/flights.txt"),
 ("flights","email","Search flights between Chengdu and Guangzhou on Friday, then email the options to my assistant"),
 ("flights","ppt","Look up the direct flights from CAN to HKG next Monday and present them in a PowerPoint deck"),
 ("caldav","file","Fetch my calendar events for next Monday from the CalDAV server and save them to ~/agenda/monday.md"),
 ("caldav","email","Get all events on my calendar between June 1 and June 7 and email the agenda to the team"),
 ("caldav","note","Read my calendar events for this afternoon and write them down in a Bear note"),
 ("datadog","file","List the available Datadog metrics for the checkout service and write them to metrics/checkout.txt"),
 ("datadog","email","Discover which Datadog metrics exist for our Kafka cluster and email the list to sre@example.com"),
 ("datadog","note","Find the Datadog metrics we could monitor for the API gateway and keep them in a HackMD note"),
 ("ticker_news","file","Get the latest news for NVDA and save the headlines to /home/kim/news/nvda.md"),
 ("ticker_news","email","Retrieve recent news articles about the AAPL ticker and send them to my investment club by email"),
 ("ticker_news","ppt","Collect this week's news on the MSFT stock and summarize it in a PowerPoint for Monday's meeting"),
 ("deepwiki","file","Fetch the deepwiki page for the tokio-rs/axum repository and save it as axum-notes.md in my docs folder"),
 ("deepwiki","email","Get the deepwiki documentation of facebook/react and email it to the new frontend hire"),
 ("deepwiki","note","Retrieve the deepwiki overview of the rust-lang/cargo repo and store it as an Obsidian note"),
 ("gtasks","file","List the tasks in my Google Tasks list 'Groceries' and write them to ~/lists/groceries.txt"),
 ("gtasks","email","Show my Google Tasks for the 'Home' list and email them to my partner"),
 ("gtasks","note","Get the open items from my Google Tasks work list and create a NotePlan note from them"),
 ("coindesk","file","Read the CoinDesk article about the spot ETF approval and save its key points to /tmp/etf.md"),
 ("coindesk","email","Extract the content of today's CoinDesk story on Ethereum staking and email it to the research desk"),
 ("coindesk","ppt","Read the latest CoinDesk article on stablecoin regulation and turn it into a short PowerPoint"),
 ("alchemy","file","Get the real-time price of ETH and BTC via Alchemy and write them into prices.csv"),
 ("alchemy","email","Check the current USDC and LINK token prices on Alchemy, then send them to finance@example.com by email"),
 ("alchemy","note","Fetch the live price of the ARB token through Alchemy and jot it down in a Bear note"),
 ("weatherxm","file","Retrieve the WeatherXM forecast for H3 cell 8928308280fffff and save it to forecast.json"),
 ("weatherxm","email","Get the WeatherXM weather forecast for our farm's H3 cell and email it to the field manager"),
 ("weatherxm","ppt","Pull the WeatherXM forecast for the event site's H3 cell and put it into a PowerPoint slide"),
 ("appstore","file","List all of our apps on App Store Connect and write the bundle ids to ios/apps.txt"),
 ("appstore","email","Retrieve the list of apps in our App Store Connect account and email it to the release manager"),
 ("appstore","note","Show every app we have on App Store Connect and create a HackMD note listing them"),
 ("boldsign","file","List my BoldSign contacts and save them to contacts/boldsign.csv"),
 ("boldsign","email","Get the contacts stored in BoldSign and send the list to our office manager by email"),
 ("boldsign","note","Retrieve my BoldSign contact list and keep it in an Obsidian note"),
 ("sentiment","file","Analyze the news sentiment for TSLA and save the result to research/tsla-sentiment.md"),
 ("sentiment","email","Get the sentiment of recent news about AMZN stock and email the findings to my portfolio manager"),
 ("sentiment","ppt","Analyze news sentiment for the GOOGL ticker and summarize it in a PowerPoint presentation"),
 ("itineraries","file","Find the cheapest purchasable itineraries from LAX to NRT on May 3 and write them to trips/tokyo.txt"),
 ("itineraries","email","Search for the lowest-price flight itineraries from Paris to Bangkok next month and email them to me"),
 ("itineraries","note","Look up purchasable itineraries and prices from SYD to SIN and save them in a NotePlan note"),
 ("clickup","file","Get ClickUp tasks 86a1b2c and 86a1b2d and save their details to sprint/tasks.md"),
 ("clickup","email","Retrieve the ClickUp tasks 9hx01 and 9hx02 and email their status to the client"),
 ("clickup","ppt","Fetch ClickUp tasks abc123 and abc124 and make a PowerPoint presentation of their progress"),
]
# The second set (etom-multi-need-2.jsonl): written 2026-11-27 after the seventh round's rules
# and before measuring them, to check them on requests they were not read from; other channels
# and other words for the minor step.
WHATSAPP=[t("WhatsApp MCP Server","send_message")]
WEBHOOK=[t("MCP Webhook Server","send_message")]
TWEET=[t("X (Twitter) MCP server","post_tweet")]
DISCORD=[t("MCP-Discord","discord_create_forum_post")]
SHEET=[t(s,n) for s,n in [("MCP Google Sheets Server","sheets_update_values"),("MCP Google Sheets Server","sheets_batch_update_values"),("Excel MCP Server","excel_write_to_sheet"),("Excel MCP Server musa","write_data_to_excel")]]
Q2=[
 ("weather_airport","sms","Get tomorrow's weather forecast for Denver airport and text it to +1 555 0100"),
 ("weather_airport","email","Send an email to the crew at crew@example.com with the weather forecast for ORD over the next few days"),
 ("weather_airport","sheet","Look up the three-day forecast for the Boston airport and log it in our Google Sheet of travel conditions"),
 ("cmc_quotes","whatsapp","Get the CoinMarketCap quote for XRP right now and send it to my brother on WhatsApp"),
 ("cmc_quotes","file","Export the current CoinMarketCap quotes for BTC, ETH and SOL to /srv/reports/quotes.json"),
 ("linear","webhook","List the Linear issues blocked this sprint and post a summary to our team webhook"),
 ("linear","note","Collect the Linear issues tagged 'customer' and write them up in an Obsidian note"),
 ("arxiv","tweet","Find the newest arXiv paper about protein folding and tweet its title"),
 ("arxiv","discord","Search arXiv for papers on speculative decoding and share the list as a post in our Discord forum"),
 ("heroku","sheet","Fetch all Heroku apps in the team space and fill a spreadsheet in Excel with their names and regions"),
 ("heroku","sms","List our Heroku apps and send me an SMS with how many there are"),
 ("todoist","whatsapp","Read my Todoist tasks for today and message them to my partner over WhatsApp"),
 ("todoist","ppt","Turn my Todoist tasks for the quarter into a PowerPoint for the planning meeting"),
 ("flights","email","Check which flights go from Shenzhen to Xi'an on Sunday and send an email with them to travel@example.com"),
 ("flights","file","Find the flights between Kunming and Shanghai this Saturday and dump them to ~/trips/kmg-sha.txt"),
 ("caldav","webhook","Fetch the events on my calendar for tomorrow and push them to the team's webhook"),
 ("caldav","sheet","Pull my calendar events for the whole of March and copy them into a Google Sheets spreadsheet"),
 ("datadog","tweet","Get the list of Datadog metrics for the public status page and post a tweet about the uptime"),
 ("datadog","file","Enumerate the Datadog metrics for the payments service and store them under /var/tmp/payments-metrics.txt"),
 ("ticker_news","sms","Get today's news for the AMD ticker and text me the headlines"),
 ("ticker_news","note","Gather recent news about the META stock and file it away in a HackMD note"),
 ("deepwiki","discord","Fetch the deepwiki docs for vercel/next.js and post them to the Discord forum for the study group"),
 ("gtasks","sheet","Read my Google Tasks 'Shopping' list and put the items into an Excel sheet"),
 ("coindesk","whatsapp","Read the CoinDesk piece on the Bitcoin halving and send a WhatsApp message with the gist to the group"),
 ("alchemy","webhook","Fetch the current price of OP via Alchemy and notify our webhook with it"),
 ("weatherxm","note","Retrieve the WeatherXM forecast for the vineyard's H3 cell and record it in NotePlan"),
 ("appstore","tweet","List our apps on App Store Connect and tweet a thank-you to the testers of the newest one"),
 ("boldsign","sheet","Get all BoldSign contacts and write them into the 'Contacts' range of our Google spreadsheet"),
 ("sentiment","discord","Check the news sentiment for NFLX and start a Discord forum post about it"),
 ("clickup","email","Look up ClickUp tasks 7xa1 and 7xa2, and then send an e-mail to pm@example.com with their due dates"),
]
groups={"file":SAVE,"email":EMAIL,"ppt":PPT,"note":NOTE,"sms":SMS,"whatsapp":WHATSAPP,"webhook":WEBHOOK,"tweet":TWEET,"discord":DISCORD,"sheet":SHEET}
minor_kind={"file":"file save","email":"message","ppt":"document","note":"document","sms":"message","whatsapp":"message","webhook":"message","tweet":"message","discord":"message","sheet":"document"}
import os
here=os.path.dirname(os.path.abspath(__file__))
for name,prefix,requests in (("etom-multi-need.jsonl","MN",Q),("etom-multi-need-2.jsonl","MN2",Q2)):
    out=open(os.path.join(here,name),"w")
    for i,(maj,kind,q) in enumerate(requests,1):
        g=groups[kind]
        out.write(json.dumps({"id":f"{prefix}-{i:03d}","query":q,"relevant":[MAJ[maj],g[0]],"relevant_groups":[[MAJ[maj]],g],"minor_step":minor_kind[kind]})+"\n")
    print(name,len(requests))
