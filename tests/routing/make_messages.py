# Writes etom-messages.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (twelfth
# round) and committed before it was measured: sending a message in everyday words ("shoot an
# email", "drop … a line", "text", "ping … on WhatsApp", "tweet"), each step with one group: every
# tool of the catalog that sends that kind of message.
from catalog_groups import EMAIL, WHATSAPP
from set_writer import named, write
# A text to a phone number: SMS, or the phone's own messages app, or WhatsApp when no app is named.
TEXT = named("ClickSend MCP Server/send_sms", "Mac Messages MCP/tool_send_message", "WhatsApp MCP Server/send_message")
SMS = named("ClickSend MCP Server/send_sms", "Mac Messages MCP/tool_send_message")
TWEET = named("LiGo + LinkedIn MCP Runner/publish_twitter_post")
LINKEDIN = named("LiGo + LinkedIn MCP Runner/publish_linkedin_post")
LATER_POST = named("LiGo + LinkedIn MCP Runner/schedule_linkedin_post", "Metricool MCP Server/post_Schedule_Post")
TEAMS_NEW = named("MCP Teams Server/start_thread")
TEAMS_REPLY = named("MCP Teams Server/update_thread")
DISCORD_REPLY = named("MCP-Discord/discord_reply_to_forum")
MEETING_CHAT = named("Attendee MCP Server/send_chat_message")
WEBHOOK = named("MCP Webhook Server/send_message")
KAFKA = named("mcp-confluent/produce-message")
Q = [
    ("Shoot an email to anna@example.com saying I'll be ten minutes late", [EMAIL]),
    ("Drop carlos@acme.io a line about moving our call to Friday", [EMAIL]),
    ("Can you mail the signed contract to legal@example.com?", [EMAIL]),
    ("Write to my landlord at landlord@example.com that the heating is broken again", [EMAIL]),
    ("Let hr@example.com know by email that I'm out sick today", [EMAIL]),
    ("Text +15551234567 that I'm on my way", [TEXT]),
    ("Send an SMS to +447700900123: your order has shipped", [SMS]),
    ("Ping Maria on WhatsApp at +34600111222 to say the keys are under the mat", [WHATSAPP]),
    ("WhatsApp my brother on +4915112345678 the address of the restaurant", [WHATSAPP]),
    ("Tweet that version 2.0 of our app is out", [TWEET]),
    ("Share on LinkedIn that we're hiring two backend engineers", [LINKEDIN]),
    ("Queue up a LinkedIn post for Monday at 9am announcing the webinar", [LATER_POST]),
    ("Kick off a Teams thread titled 'Q3 planning' asking everyone for their goals", [TEAMS_NEW]),
    ("Add a reply to Teams thread 19:abc mentioning Priya that the numbers are in", [TEAMS_REPLY]),
    ("Answer Discord forum thread 1234 with 'fixed in v2.1'", [DISCORD_REPLY]),
    ("Have the meeting bot bot_42 say in the chat that I'm stepping out for five minutes", [MEETING_CHAT]),
    ("Notify our webhook at https://hooks.example.com/ops that the nightly backup failed", [WEBHOOK]),
    ("Publish 'order 1234 created' to the orders Kafka topic", [KAFKA]),
    ("Email the quarterly numbers to acct@example.com and text my partner on +15550001111 that it's done", [EMAIL, TEXT]),
    ("Tweet the launch and also post it on LinkedIn", [TWEET, LINKEDIN]),
]
write("etom-messages.jsonl", "MS", Q)
