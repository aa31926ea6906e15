# Writes etom-commands.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (eleventh
# round) before any rule for them and committed before they were measured: requests that name a
# shell command to run, as users of coding agents and terminals write them ("… using the df
# command", "… with `docker ps`", "run `npm test` …", "… by running pip install requests"), most
# with a need of their own that the command serves (the date, the free disk, a download), some
# with a second step of another server.
import json
import os
from catalog_groups import t, one
# Every catalog tool that runs a shell command it is given on the user's machine (read from every
# description that pairs running or executing with a shell, terminal or command line; tools that
# run one fixed command, or commands on a remote desktop or inside an editor, are not in it).
CMD=[t("Terminal Controller for MCP","execute_command"),t("MCP Shell Server","shell_exec"),t("SkyDeckAI Code","execute_shell_script"),t("MCP Access Template","command-execute")]
def cmd_or(*fixed): return CMD+[t(s,n) for s,n in fixed]
Q=[
 ("What is listening on port 8080 on this machine? Check it with the lsof command.", [CMD]),
 ("Show how much disk space is free on / using the df -h command", [cmd_or(("shell-mcp","shell_df"))]),
 ("Find out which Node.js version is installed, using the command node --version", [CMD]),
 ("Run `npm test` in ~/projects/shop and tell me which tests fail", [CMD]),
 ("List the running containers with `docker ps`", [CMD]),
 ("Count the lines of every Rust file under src using the wc command", [CMD]),
 ("Ping github.com five times using the ping command and tell me the average latency", [CMD]),
 ("Pack the logs folder into logs.tar.gz with the tar command", [CMD]),
 ("Kill whatever process holds port 3000, via the kill command", [CMD]),
 ("Use the command `pip list --outdated` to see which Python packages need updating", [CMD]),
 ("Make photo.png half its size using ImageMagick's convert command", [CMD]),
 ("Tell me the current date and time using the date command", [cmd_or(("shell-mcp","shell_date"))]),
 ("How long has this server been up? Use the uptime command.", [cmd_or(("shell-mcp","shell_uptime"))]),
 ("Look up the DNS records of example.com with the nslookup command", [cmd_or(("shell-mcp","shell_nslookup"))]),
 ("Install the requests package by running pip install requests", [CMD]),
 ("Restart the nginx service with sudo systemctl restart nginx", [CMD]),
 ("Search arXiv for recent papers on diffusion models, then download the first PDF using the curl command", [one("ArXiv MCP Server","search_papers"),CMD]),
 ("Get the open issues assigned to me in Linear, then run `git status` in ~/work/api to see what I have not committed", [one("Linear MCP Server","list_issues"),CMD]),
 ("List my Heroku apps and check that the heroku CLI works with the command heroku --version", [one("heroku-mcp-server","list_apps"),CMD]),
 ("Check the weather forecast at Paris CDG airport, then run the command notify-send 'forecast ready'", [one("Variflight MCP Server","getFutureWeatherByAirport"),CMD]),
]
out=os.path.join(os.path.dirname(os.path.abspath(__file__)),"etom-commands.jsonl")
with open(out,"w") as f:
    for i,(q,groups) in enumerate(Q,1):
        rel=[];seen=set()
        for g in groups:
            for x in g[:1]:
                k=(x['server'],x['name'])
                if k not in seen: seen.add(k); rel.append(x)
        f.write(json.dumps({"id":f"CM-{i:03d}","query":q,"relevant":rel,"relevant_groups":groups})+"\n")
print(len(Q),"requests ->",out)
