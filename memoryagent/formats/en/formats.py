# One way to write a time across the pages and the admin (the pages' templates use the
# same "Y-m-d H:i"): unambiguous in every country, and sortable.
DATE_FORMAT = "Y-m-d"
DATETIME_FORMAT = "Y-m-d H:i"
SHORT_DATE_FORMAT = "Y-m-d"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
TIME_FORMAT = "H:i"
