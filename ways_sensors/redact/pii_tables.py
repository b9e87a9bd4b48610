"""The tables pii.py validates personal data with: calling codes and national number
lengths (ITU-T E.164 assignments), national phone formats of 22 regions, IBAN lengths
(the SWIFT IBAN registry) and card issuers' prefixes and lengths."""

from __future__ import annotations

from ..regex import Lazy

# calling code -> the lengths of a national (significant) number after it
CALLING: dict[str, frozenset[int]] = {
    code: frozenset(lengths)
    for code, lengths in {
        "1": (10,),
        "7": (10,),
        "20": (9, 10),
        "27": (9,),
        "30": (10,),
        "31": (9,),
        "32": (8, 9),
        "33": (9,),
        "34": (9,),
        "36": (8, 9),
        "39": range(6, 12),
        "40": (9,),
        "41": (9,),
        "43": range(4, 14),
        "44": (9, 10),
        "45": (8,),
        "46": range(7, 11),
        "47": (8,),
        "48": (9,),
        "49": range(6, 12),
        "51": (8, 9),
        "52": (10,),
        "54": (10,),
        "55": (10, 11),
        "56": (9,),
        "57": (8, 10),
        "60": range(7, 11),
        "61": (9,),
        "62": range(8, 13),
        "63": range(8, 11),
        "64": range(8, 11),
        "65": (8,),
        "66": (8, 9),
        "81": (9, 10),
        "82": range(8, 11),
        "84": (9, 10),
        "86": (10, 11),
        "90": (10,),
        "91": (10,),
        "92": (9, 10),
        "234": (8, 10),
        "254": (9,),
        "351": (9,),
        "353": range(7, 10),
        "358": range(6, 11),
        "420": (9,),
        "966": (9,),
        "971": (8, 9),
        "972": (8, 9),
    }.items()
}

_N = r"(?<![\w+\-.])"  # a national number starts after no letter, digit, plus, dash or dot
_E = r"(?![\d]|[.\-]\d)"
# (region, format, its digit counts, trunk prefix included)
_NATIONAL = (
    ("US CA", r"\(?[2-9]\d{2}\)?[ .\-][2-9]\d{2}[ .\-]\d{4}", (10,)),
    ("GB", r"0(?:\d{2} \d{4} \d{4}|\d{3} \d{3} \d{4}|\d{4} \d{6}|\d{4} \d{3} \d{3})", (11,)),
    ("FR", r"0[1-9](?:[ .]\d{2}){4}", (10,)),
    ("DE AT", r"0[1-9]\d{1,4}[ /\-]\d{5,8}", (10, 11, 12)),
    ("ES", r"[6-9]\d{2} \d{3} \d{3}", (9,)),
    ("IT", r"3\d{2} \d{3} \d{4}", (10,)),
    ("NL", r"06[ \-]\d{8}", (10,)),
    ("JP", r"0\d{1,4}-\d{1,4}-\d{4}", (10, 11)),
    ("AU", r"0[2378] \d{4} \d{4}|04\d{2} \d{3} \d{3}", (10,)),
    ("IN", r"[6-9]\d{4} \d{5}", (10,)),
    ("BR", r"\(\d{2}\) ?9?\d{4}-\d{4}", (10, 11)),
    ("MX", r"(?:55|33|81) \d{4} \d{4}", (10,)),
    ("CN", r"1[3-9]\d[ \-]\d{4}[ \-]\d{4}", (11,)),
    ("KR", r"01[016789]-\d{3,4}-\d{4}", (10, 11)),
    ("RU", r"8 ?\(\d{3}\) ?\d{3}-\d{2}-\d{2}", (11,)),
    ("PL", r"[1-9]\d{2} \d{3} \d{3}", (9,)),
    ("CH", r"0\d{2} \d{3} \d{2} \d{2}", (10,)),
    ("SE", r"07\d-\d{3} \d{2} \d{2}", (10,)),
    ("ZA", r"0[1-8]\d \d{3} \d{4}", (10,)),
    ("TR", r"0 ?\(?5\d{2}\)? \d{3} \d{2} \d{2}", (11,)),
    ("IE", r"08[35679] \d{3} \d{4}", (10,)),
    ("NG", r"0[789][01]\d \d{3} \d{4}", (11,)),
)
NATIONAL: tuple[tuple[Lazy, frozenset[int]], ...] = tuple(
    (Lazy(_N + "(?:" + rx + ")" + _E), frozenset(n)) for _, rx, n in _NATIONAL
)
REGIONS = tuple(r for regions, _, _ in _NATIONAL for r in regions.split())

IBAN_LENGTH: dict[str, int] = {
    c: int(n)
    for c, n in (
        item.split(":")
        for item in str.split(
            "AD:24 AE:23 AL:28 AT:20 AZ:28 BA:20 BE:16 BG:22 BH:22 BR:29 BY:28 CH:21 CR:22 "
            "CY:28 CZ:24 DE:22 DK:18 DO:28 EE:20 EG:29 ES:24 FI:18 FO:18 FR:27 GB:22 GE:22 "
            "GI:23 GL:18 GR:27 GT:28 HR:21 HU:28 IE:22 IL:23 IQ:23 IS:26 IT:27 JO:30 KW:30 "
            "KZ:20 LB:28 LC:32 LI:21 LT:20 LU:20 LV:21 MC:27 MD:24 ME:22 MK:19 MR:27 MT:31 "
            "MU:30 NL:18 NO:15 PK:24 PL:28 PS:29 PT:25 QA:29 RO:24 RS:22 SA:24 SC:31 SE:24 "
            "SI:19 SK:24 SM:27 ST:25 SV:28 TL:23 TN:24 TR:26 UA:29 VA:22 VG:24 XK:20"
        )
    )
}

# (prefix, card lengths): Visa, Mastercard (51-55, 2221-2720), Amex, Discover, JCB,
# Diners Club, UnionPay
CARD_PREFIXES: tuple[tuple[str, frozenset[int]], ...] = tuple(
    (p, frozenset(n))
    for p, n in (
        [("4", (13, 16, 19))]
        + [(str(p), (16,)) for p in range(51, 56)]
        + [(str(p), (16,)) for p in range(2221, 2721)]
        + [("34", (15,)), ("37", (15,)), ("6011", (16, 19)), ("65", (16, 19))]
        + [(str(p), (16, 19)) for p in range(644, 650)]
        + [("35", (16, 19)), ("36", (14,)), ("38", (14,))]
        + [(str(p), (14,)) for p in range(300, 306)]
        + [("62", (16, 17, 18, 19))]
    )
)
