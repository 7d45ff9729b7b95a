"""An inbox full of planted personal data, in every format the readers take and in the places a value can hide
(headers, a chat message, a spreadsheet cell, a file name, a file that cannot be read): for tests that look for
any of it where a person looks."""

from __future__ import annotations

import json
from pathlib import Path

TENANT = "planted"
EMAIL = "hana.okafor@riverside-clinic.org"
EMAIL_2 = "t.brandt@kestrel-freight.de"
PHONE = "+1 510 555 0177"
PHONE_2 = "(415) 555-0143"
CARD = "4111 1111 1111 1111"
IBAN = "DE89 3704 0044 0532 0130 00"
SSN = "536-90-4312"
IP = "203.0.113.45"
PASSWORD = "Tr0ub4dor-and-3x"
FILE_NAME_EMAIL = "lena.voss@northwind-mail.com"
PLANTED = (EMAIL, EMAIL_2, PHONE, PHONE_2, CARD, IBAN, SSN, IP, PASSWORD, FILE_NAME_EMAIL)


def plant_pii_inbox(inbox: Path) -> tuple[str, ...]:
    """Write the planted tenant's files under `inbox`; the values planted (each one the scrubber masks)."""
    root = inbox / TENANT
    for folder in ("email", "support", "notes", "chat", "chaos-import"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "email" / "2026-12-01-card-on-file.eml").write_text(
        f"Message-ID: <planted-1@kestrel-freight.de>\nDate: Tue, 1 Dec 2026 09:15:00 +0100\n"
        f"From: Tomas Brandt <{EMAIL_2}>\nTo: Hana Okafor <{EMAIL}>\nSubject: Card {CARD} declined, call {PHONE}\n"
        "Content-Type: text/plain; charset=utf-8\n\n"
        f"Hi Hana,\n\nCan you please approve the refund by Friday? The card {CARD} was declined twice.\n"
        f"Wire it to {IBAN} instead. I will send the signed form by 2026-12-04.\n"
        f"Call me on {PHONE} if anything is unclear.\n\nTomas\n",
        encoding="utf-8",
    )
    (root / "support" / "2026-12-01-call-note.txt").write_text(
        f"Support call, 2026-12-01, 10:05\n\nCaller: Hana Okafor, {EMAIL}, SSN {SSN}\n"
        f"The replacement part has still not arrived. She asked us to call back today on {PHONE_2}.\n"
        f"Our portal logged her from {IP}. Urgent: she will cancel the order if it is not shipped by Friday.\n",
        encoding="utf-8",
    )
    (root / "notes" / "2026-12-01-it-handover.md").write_text(
        f"# IT handover\n\n- Decision: we reset the admin account; password: {PASSWORD}\n"
        f"- Action: Tomas to rotate the VPN key for {IP} by 2026-12-03\n- Risk: the card {CARD} is on the old form\n",
        encoding="utf-8",
    )
    chat = {
        "channel": "#billing",
        "messages": [
            {"sender": "Hana Okafor", "time": "2026-12-01T08:00:00+01:00", "text": f"Refund goes to {IBAN}, ok?"},
            {"sender": "Tomas Brandt", "time": "2026-12-01T08:02:00+01:00", "text": f"I'll call {PHONE} by noon."},
        ],
    }
    (root / "chat" / "billing-2026-12-01.json").write_text(json.dumps(chat), encoding="utf-8")
    (root / "chaos-import" / "2026-12-01-checkin.csv").write_text(
        f"name,email,blocker\nHana Okafor,{EMAIL},card {CARD} declined; blocked until the refund\n", encoding="utf-8"
    )
    # a file that cannot be read, named after a person: its path is in every report of the failure
    (root / "chat" / f"export-{FILE_NAME_EMAIL}.json").write_text(f'{{"from": "{EMAIL}", "messages": [', "utf-8")
    (root / "notes" / f"call-{FILE_NAME_EMAIL}.txt").write_text(
        f"Call note: Lena asked us to send the invoice by Friday to {EMAIL_2}.\n", encoding="utf-8"
    )
    return PLANTED
