for i in range(80):
    print(f'[build] step {i} ' + 'x' * 60)
    if i == 40:
        print('UNIQUE_TOKEN=tok_9f31c_middle')
