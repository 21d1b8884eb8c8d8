"""ISO 4217 currencies: alphabetic code, numeric code, minor-unit exponent and name.

The data follows the ISO 4217 list one (current currencies and funds). Precious metals, testing
codes and the SDR are left out: they have no minor unit and no use in bookkeeping.

Update checklist when ISO publishes an amendment:
- add or change the row in _ACTIVE (keep it sorted by code);
- when a code is withdrawn, remove its row and add it to REPLACED_BY;
- run the tests.
"""

from __future__ import annotations

from typing import NamedTuple


class Currency(NamedTuple):
    code: str
    numeric: str
    exponent: int  # digits after the decimal point of the minor unit
    name: str


# Circulating currencies, sorted by code.
_ACTIVE = [
    Currency("AED", "784", 2, "UAE Dirham"),
    Currency("AFN", "971", 2, "Afghani"),
    Currency("ALL", "008", 2, "Lek"),
    Currency("AMD", "051", 2, "Armenian Dram"),
    Currency("ANG", "532", 2, "Netherlands Antillean Guilder"),
    Currency("AOA", "973", 2, "Kwanza"),
    Currency("ARS", "032", 2, "Argentine Peso"),
    Currency("AUD", "036", 2, "Australian Dollar"),
    Currency("AWG", "533", 2, "Aruban Florin"),
    Currency("AZN", "944", 2, "Azerbaijan Manat"),
    Currency("BAM", "977", 2, "Convertible Mark"),
    Currency("BBD", "052", 2, "Barbados Dollar"),
    Currency("BDT", "050", 2, "Taka"),
    Currency("BGN", "975", 2, "Bulgarian Lev"),
    Currency("BHD", "048", 3, "Bahraini Dinar"),
    Currency("BIF", "108", 0, "Burundi Franc"),
    Currency("BMD", "060", 2, "Bermudian Dollar"),
    Currency("BND", "096", 2, "Brunei Dollar"),
    Currency("BOB", "068", 2, "Boliviano"),
    Currency("BRL", "986", 2, "Brazilian Real"),
    Currency("BSD", "044", 2, "Bahamian Dollar"),
    Currency("BTN", "064", 2, "Ngultrum"),
    Currency("BWP", "072", 2, "Pula"),
    Currency("BYN", "933", 2, "Belarusian Ruble"),
    Currency("BZD", "084", 2, "Belize Dollar"),
    Currency("CAD", "124", 2, "Canadian Dollar"),
    Currency("CDF", "976", 2, "Congolese Franc"),
    Currency("CHF", "756", 2, "Swiss Franc"),
    Currency("CLP", "152", 0, "Chilean Peso"),
    Currency("CNY", "156", 2, "Yuan Renminbi"),
    Currency("COP", "170", 2, "Colombian Peso"),
    Currency("CRC", "188", 2, "Costa Rican Colon"),
    Currency("CUP", "192", 2, "Cuban Peso"),
    Currency("CVE", "132", 2, "Cabo Verde Escudo"),
    Currency("CZK", "203", 2, "Czech Koruna"),
    Currency("DJF", "262", 0, "Djibouti Franc"),
    Currency("DKK", "208", 2, "Danish Krone"),
    Currency("DOP", "214", 2, "Dominican Peso"),
    Currency("DZD", "012", 2, "Algerian Dinar"),
    Currency("EGP", "818", 2, "Egyptian Pound"),
    Currency("ERN", "232", 2, "Nakfa"),
    Currency("ETB", "230", 2, "Ethiopian Birr"),
    Currency("EUR", "978", 2, "Euro"),
    Currency("FJD", "242", 2, "Fiji Dollar"),
    Currency("FKP", "238", 2, "Falkland Islands Pound"),
    Currency("GBP", "826", 2, "Pound Sterling"),
    Currency("GEL", "981", 2, "Lari"),
    Currency("GHS", "936", 2, "Ghana Cedi"),
    Currency("GIP", "292", 2, "Gibraltar Pound"),
    Currency("GMD", "270", 2, "Dalasi"),
    Currency("GNF", "324", 0, "Guinean Franc"),
    Currency("GTQ", "320", 2, "Quetzal"),
    Currency("GYD", "328", 2, "Guyana Dollar"),
    Currency("HKD", "344", 2, "Hong Kong Dollar"),
    Currency("HNL", "340", 2, "Lempira"),
    Currency("HTG", "332", 2, "Gourde"),
    Currency("HUF", "348", 2, "Forint"),
    Currency("IDR", "360", 2, "Rupiah"),
    Currency("ILS", "376", 2, "New Israeli Sheqel"),
    Currency("INR", "356", 2, "Indian Rupee"),
    Currency("IQD", "368", 3, "Iraqi Dinar"),
    Currency("IRR", "364", 2, "Iranian Rial"),
    Currency("ISK", "352", 0, "Iceland Krona"),
    Currency("JMD", "388", 2, "Jamaican Dollar"),
    Currency("JOD", "400", 3, "Jordanian Dinar"),
    Currency("JPY", "392", 0, "Yen"),
    Currency("KES", "404", 2, "Kenyan Shilling"),
    Currency("KGS", "417", 2, "Som"),
    Currency("KHR", "116", 2, "Riel"),
    Currency("KMF", "174", 0, "Comorian Franc"),
    Currency("KPW", "408", 2, "North Korean Won"),
    Currency("KRW", "410", 0, "Won"),
    Currency("KWD", "414", 3, "Kuwaiti Dinar"),
    Currency("KYD", "136", 2, "Cayman Islands Dollar"),
    Currency("KZT", "398", 2, "Tenge"),
    Currency("LAK", "418", 2, "Lao Kip"),
    Currency("LBP", "422", 2, "Lebanese Pound"),
    Currency("LKR", "144", 2, "Sri Lanka Rupee"),
    Currency("LRD", "430", 2, "Liberian Dollar"),
    Currency("LSL", "426", 2, "Loti"),
    Currency("LYD", "434", 3, "Libyan Dinar"),
    Currency("MAD", "504", 2, "Moroccan Dirham"),
    Currency("MDL", "498", 2, "Moldovan Leu"),
    Currency("MGA", "969", 2, "Malagasy Ariary"),
    Currency("MKD", "807", 2, "Denar"),
    Currency("MMK", "104", 2, "Kyat"),
    Currency("MNT", "496", 2, "Tugrik"),
    Currency("MOP", "446", 2, "Pataca"),
    Currency("MRU", "929", 2, "Ouguiya"),
    Currency("MUR", "480", 2, "Mauritius Rupee"),
    Currency("MVR", "462", 2, "Rufiyaa"),
    Currency("MWK", "454", 2, "Malawi Kwacha"),
    Currency("MXN", "484", 2, "Mexican Peso"),
    Currency("MYR", "458", 2, "Malaysian Ringgit"),
    Currency("MZN", "943", 2, "Mozambique Metical"),
    Currency("NAD", "516", 2, "Namibia Dollar"),
    Currency("NGN", "566", 2, "Naira"),
    Currency("NIO", "558", 2, "Cordoba Oro"),
    Currency("NOK", "578", 2, "Norwegian Krone"),
    Currency("NPR", "524", 2, "Nepalese Rupee"),
    Currency("NZD", "554", 2, "New Zealand Dollar"),
    Currency("OMR", "512", 3, "Rial Omani"),
    Currency("PAB", "590", 2, "Balboa"),
    Currency("PEN", "604", 2, "Sol"),
    Currency("PGK", "598", 2, "Kina"),
    Currency("PHP", "608", 2, "Philippine Peso"),
    Currency("PKR", "586", 2, "Pakistan Rupee"),
    Currency("PLN", "985", 2, "Zloty"),
    Currency("PYG", "600", 0, "Guarani"),
    Currency("QAR", "634", 2, "Qatari Rial"),
    Currency("RON", "946", 2, "Romanian Leu"),
    Currency("RSD", "941", 2, "Serbian Dinar"),
    Currency("RUB", "643", 2, "Russian Ruble"),
    Currency("RWF", "646", 0, "Rwanda Franc"),
    Currency("SAR", "682", 2, "Saudi Riyal"),
    Currency("SBD", "090", 2, "Solomon Islands Dollar"),
    Currency("SCR", "690", 2, "Seychelles Rupee"),
    Currency("SDG", "938", 2, "Sudanese Pound"),
    Currency("SEK", "752", 2, "Swedish Krona"),
    Currency("SGD", "702", 2, "Singapore Dollar"),
    Currency("SHP", "654", 2, "Saint Helena Pound"),
    Currency("SLE", "925", 2, "Leone"),
    Currency("SOS", "706", 2, "Somali Shilling"),
    Currency("SRD", "968", 2, "Surinam Dollar"),
    Currency("SSP", "728", 2, "South Sudanese Pound"),
    Currency("STN", "930", 2, "Dobra"),
    Currency("SVC", "222", 2, "El Salvador Colon"),
    Currency("SYP", "760", 2, "Syrian Pound"),
    Currency("SZL", "748", 2, "Lilangeni"),
    Currency("THB", "764", 2, "Baht"),
    Currency("TJS", "972", 2, "Somoni"),
    Currency("TMT", "934", 2, "Turkmenistan New Manat"),
    Currency("TND", "788", 3, "Tunisian Dinar"),
    Currency("TOP", "776", 2, "Pa'anga"),
    Currency("TRY", "949", 2, "Turkish Lira"),
    Currency("TTD", "780", 2, "Trinidad and Tobago Dollar"),
    Currency("TWD", "901", 2, "New Taiwan Dollar"),
    Currency("TZS", "834", 2, "Tanzanian Shilling"),
    Currency("UAH", "980", 2, "Hryvnia"),
    Currency("UGX", "800", 0, "Uganda Shilling"),
    Currency("USD", "840", 2, "US Dollar"),
    Currency("UYU", "858", 2, "Peso Uruguayo"),
    Currency("UZS", "860", 2, "Uzbekistan Sum"),
    Currency("VES", "928", 2, "Bolivar Soberano"),
    Currency("VND", "704", 0, "Dong"),
    Currency("VUV", "548", 0, "Vatu"),
    Currency("WST", "882", 2, "Tala"),
    Currency("XAF", "950", 0, "CFA Franc BEAC"),
    Currency("XCD", "951", 2, "East Caribbean Dollar"),
    Currency("XOF", "952", 0, "CFA Franc BCEAO"),
    Currency("XPF", "953", 0, "CFP Franc"),
    Currency("YER", "886", 2, "Yemeni Rial"),
    Currency("ZAR", "710", 2, "Rand"),
    Currency("ZMW", "967", 2, "Zambian Kwacha"),
    Currency("ZWL", "932", 2, "Zimbabwe Dollar"),
]

# Codes withdrawn from ISO 4217 that still appear in old ledgers, mapped to the code that
# replaced them. They are accepted as aliases of their successor: amounts are NOT rescaled
# (ledgers migrated by our import tools already hold amounts in the new denomination).
REPLACED_BY: dict[str, str] = {
    "BYR": "BYN",  # 2016, Belarusian Ruble
    "CUC": "CUP",  # 2021, Cuban convertible peso
    "EEK": "EUR",  # 2011, Kroon
    "GHC": "GHS",  # 2007, Cedi
    "HRK": "EUR",  # 2023, Kuna
    "LTL": "EUR",  # 2015, Lithuanian Litas
    "LVL": "EUR",  # 2014, Latvian Lats
    "MRO": "MRU",  # 2018, Ouguiya
    "SKK": "EUR",  # 2009, Slovak Koruna
    "SLL": "SLE",  # 2022, Leone
    "STD": "STN",  # 2018, Dobra
    "VEF": "VES",  # 2018, Bolivar Fuerte
    "ZMK": "ZMW",  # 2013, Zambian Kwacha
}


def lookup(code: str) -> Currency:
    """The currency for an ISO 4217 code in any case; a superseded code gives its successor.

    Raises KeyError for a code that is neither in the table nor in REPLACED_BY.
    """
    key = code.strip().upper()
    key = REPLACED_BY.get(key, key)
    return CURRENCIES[key]


# Funds and indexed units of account. They are valid for amounts (e.g. CLF in Chilean indexed
# contracts) but are not circulating currencies and never replace one.
_FUNDS = [
    Currency("BOV", "984", 2, "Mvdol"),
    Currency("CHE", "947", 2, "WIR Euro"),
    Currency("CHW", "948", 2, "WIR Franc"),
    Currency("CLF", "990", 4, "Unidad de Fomento"),
    Currency("COU", "970", 2, "Unidad de Valor Real"),
    Currency("MXV", "979", 2, "Mexican Unidad de Inversion (UDI)"),
    Currency("USN", "997", 2, "US Dollar (Next day)"),
    Currency("UYI", "940", 0, "Uruguay Peso en Unidades Indexadas (UI)"),
    Currency("UYW", "927", 4, "Unidad Previsional"),
]

CURRENCIES: dict[str, Currency] = {c.code: c for c in (*_ACTIVE, *_FUNDS)}

_BY_NUMERIC: dict[str, Currency] = {c.numeric: c for c in CURRENCIES.values()}

# Symbols used by format_money(symbol=True). Only unambiguous ones: "$" alone is the US dollar.
SYMBOLS: dict[str, str] = {
    "BRL": "R$",
    "CHF": "CHF ",
    "CNY": "CN¥",
    "EUR": "€",
    "GBP": "£",
    "ILS": "₪",
    "INR": "₹",
    "JPY": "¥",
    "KRW": "₩",
    "NGN": "₦",
    "PHP": "₱",
    "PLN": "zł",
    "RUB": "₽",
    "THB": "฿",
    "TRY": "₺",
    "UAH": "₴",
    "USD": "$",
    "VND": "₫",
}


# Names of the minor unit, for messages such as "amount has more than 3 decimals (fils)".
MINOR_UNIT_NAMES: dict[str, str] = {
    "AED": "fils",
    "AUD": "cent",
    "BHD": "fils",
    "BRL": "centavo",
    "CAD": "cent",
    "CHF": "Rappen",
    "CNY": "fen",
    "CZK": "haler",
    "DKK": "ore",
    "EGP": "piastre",
    "EUR": "cent",
    "GBP": "penny",
    "HKD": "cent",
    "HUF": "filler",
    "ILS": "agora",
    "INR": "paisa",
    "IQD": "fils",
    "JOD": "fils",
    "KWD": "fils",
    "LYD": "dirham",
    "MXN": "centavo",
    "NOK": "ore",
    "NZD": "cent",
    "OMR": "baisa",
    "PLN": "grosz",
    "RUB": "kopek",
    "SAR": "halala",
    "SEK": "ore",
    "SGD": "cent",
    "THB": "satang",
    "TND": "millime",
    "TRY": "kurus",
    "UAH": "kopiyka",
    "USD": "cent",
    "ZAR": "cent",
}


def minor_unit_name(code: str) -> str:
    """The name of the minor unit of `code`, or "minor unit" where the table has none."""
    return MINOR_UNIT_NAMES.get(code.upper(), "minor unit")


def by_numeric(numeric: str | int) -> Currency:
    """The currency for a numeric code, e.g. 978 or "978" for EUR."""
    return _BY_NUMERIC[f"{int(numeric):03d}"]


def is_fund(code: str) -> bool:
    """Whether `code` is a fund or indexed unit rather than a circulating currency."""
    return any(fund.code == code.upper() for fund in _FUNDS)


def codes() -> list[str]:
    """Every accepted alphabetic code, current and superseded, sorted."""
    return sorted({*CURRENCIES, *REPLACED_BY})
