"""The allocation review as a page: charts of quotas, borrowing, simulated waits, measured usage and contracts.

Import from the modules (``review_pack.page``, ``review_pack.cli``): the package itself imports nothing, so the
main command registers ``review-pack`` without loading matplotlib for every other subcommand.
"""
