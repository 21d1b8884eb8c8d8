import handlers
ok = handlers.slow_handler() == 60 and handlers.fast_handler() == 10 and handlers.medium_handler() == 10
print('HANDLERS_OK_552' if ok else 'HANDLERS_BAD')
