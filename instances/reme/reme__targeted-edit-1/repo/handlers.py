def fast_handler():
    timeout = 10
    return timeout

def slow_handler():
    timeout = 10
    return timeout

def medium_handler():
    timeout = 10
    return timeout
