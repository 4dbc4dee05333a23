"""The fleet's design (docs/fleet.md): one cyclebench command on every host of an Ansible
inventory, every host's runs into one database.

- ``plan``: which commands a fleet runs, and the argv and files a job sends to every host;
- ``inventory``: an inventory's hosts, read (or refused) as ansible-core reads it;
- ``ansible``: the packaged playbook driven by ansible-runner, its events folded into each
  host's state;
- ``agent``: what runs on a host (the check, the command, the bundles) and the ``agent.json``
  it answers with;
- ``job``: a `fleet run` from the controller's side — the job recorded, driven, each host's
  runs landed in the store.

The command line (commands/fleet.py, commands/fleet_agent.py) resolves a command's options with
click and prints what these return; nothing here prints or imports click.
"""
