import requests

def fetch_a(url):
    return requests.get(url, timeout=30)

def fetch_b(url):
    return requests.post(url, timeout=30)

def fetch_c(url):
    return requests.head(url, timeout=30)
