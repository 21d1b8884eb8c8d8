import uuid


def charge_with_retry(client, invoice, amount_minor):
    key = f'pay-{uuid.uuid4().hex[:8]}'  # BUG: a new key on every attempt
    for attempt in range(1, MAX_ATTEMPTS + 1):
        response = client.charge(invoice, amount_minor, idempotency_key=key)
        if response.status in NO_RETRY_HTTP_STATUSES:
            return response
        if response.ok:
            return response
    return response


MAX_ATTEMPTS = 3
NO_RETRY_HTTP_STATUSES = (402, 422)
