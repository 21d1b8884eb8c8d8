for i in range(4000):
    print(f'[build] step {i} ' + 'x' * 60)
    if i == 2000:
        print('UNIQUE_TOKEN=tok_9f31c_middle')
