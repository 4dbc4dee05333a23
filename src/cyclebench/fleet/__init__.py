"""The fleet's Ansible playbook, shipped as package data (docs/fleet.md)."""

from pathlib import Path

PLAYBOOK = Path(__file__).with_name("playbook.yml")
